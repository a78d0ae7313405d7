package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/internal/cmdhelp"
	"github.com/edgefence/edgefence/internal/flagvalue"
	"github.com/edgefence/edgefence/progress"
	"github.com/edgefence/edgefence/replay"
)

// replayOptions are replay's settings, filled by its flags.
type replayOptions struct {
	replay.Options
	json      bool
	diffLimit int
}

func replayFlags(o *replayOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("edgefence replay", flag.ContinueOnError)
	e := &o.Engine
	fs.Var((*flagvalue.Durations)(&o.Holds), "holds", "strategies: comma-separated holds; the transitions of each are diffed against hold 0 (arrival order), or the first if 0 is not listed")
	fs.StringVar(&o.Fences, "fences", o.Fences, "GeoJSON fence file: the one the captured broker ran with")
	fs.BoolVar(&o.json, "json", o.json, "print JSON instead of a table")
	fs.IntVar(&o.diffLimit, "diff-limit", o.diffLimit, "transition diff lines shown per strategy (the rest are counted)")
	fs.DurationVar(&e.Dwell, "dwell", e.Dwell, "default dwell; a fence's 'dwell' property overrides; 0 disables")
	fs.Float64Var(&e.MaxSpeed, "speed-gate", e.MaxSpeed, "speed gate, m/s, as the captured broker ran (0: off)")
	fs.IntVar(&e.BufferCap, "buffer-cap", e.BufferCap, "reorder buffer capacity per device")
	fs.DurationVar(&e.Sweep, "sweep", e.Sweep, "housekeeping period (idle eviction; a silent device's DWELL is a deadline of its own)")
	fs.DurationVar(&e.IdleTimeout, "idle-timeout", e.IdleTimeout, "silence after which a device's buffer memory is reclaimed")
	return fs
}

// defaultReplayOptions are replay's flag defaults: serve's engine.
func defaultReplayOptions() *replayOptions {
	return &replayOptions{Options: replay.DefaultOptions(), diffLimit: 50}
}

func replayCommand() *ffcli.Command {
	o := defaultReplayOptions()
	fs := replayFlags(o)
	return &ffcli.Command{
		Name:       "replay",
		ShortUsage: "edgefence replay [flags] FILE...",
		ShortHelp:  "replay a capture (serve --capture) through the engine under several holds",
		LongHelp: "Run every ping of a capture through the engine in virtual time, at the instants it\n" +
			"arrived, under each hold, and print each strategy's figures and how its transitions\n" +
			"differ from arrival order's. FILE is a capture; its rotated files (FILE.N … FILE.1)\n" +
			"are read first. Flags may also follow the files.",
		FlagSet: fs,
		Exec: func(ctx context.Context, args []string) error {
			defer exitOnSignal(ctx, "replay")()
			files, err := cmdhelp.Interspersed(fs, args) // flags may follow the files
			switch {
			case errors.Is(err, flag.ErrHelp):
				return err
			case err != nil:
				return cmdhelp.UsageError{Cmd: "edgefence replay", Err: err}
			case len(files) == 0:
				return cmdhelp.UsageError{Cmd: "edgefence replay", Err: errors.New("name at least one capture file")}
			}
			return runReplay(os.Stdout, o, files)
		},
	}
}

// runReplay replays files under o's holds and prints the result, drawing
// a status line on a terminal meanwhile.
func runReplay(w io.Writer, o *replayOptions, files []string) error {
	o.Status = newStatus(progress.Stderr(o.json), progress.Options{Label: "replay: reading", Unit: "records"})
	res, err := replay.Run(o.Options, files)
	o.Status.Stop()
	if err != nil {
		return err
	}
	if o.json {
		return res.WriteJSON(w, o.diffLimit)
	}
	return res.WriteTable(w, o.diffLimit)
}
