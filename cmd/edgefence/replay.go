package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/progress"
	"github.com/edgefence/edgefence/shadow"
)

// replayOptions are replay's settings, filled by its flags.
type replayOptions struct {
	engine    engine.Config
	holds     durationList
	fences    string
	json      bool
	diffLimit int
	status    io.Writer // the status line's terminal; nil: none
}

func replayFlags(o *replayOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("edgefence replay", flag.ContinueOnError)
	e := &o.engine
	fs.Var(&o.holds, "holds", "strategies: comma-separated holds; the transitions of each are diffed against hold 0 (arrival order), or the first if 0 is not listed")
	fs.StringVar(&o.fences, "fences", o.fences, "GeoJSON fence file: the one the captured broker ran with")
	fs.BoolVar(&o.json, "json", o.json, "print JSON instead of a table")
	fs.IntVar(&o.diffLimit, "diff-limit", o.diffLimit, "transition diff lines shown per strategy (the rest are counted)")
	fs.DurationVar(&e.Dwell, "dwell", e.Dwell, "default dwell; a fence's 'dwell' property overrides; 0 disables")
	fs.IntVar(&e.BufferCap, "buffer-cap", e.BufferCap, "reorder buffer capacity per device")
	fs.DurationVar(&e.Sweep, "sweep", e.Sweep, "housekeeping period (DWELL of silent devices, idle eviction)")
	fs.DurationVar(&e.IdleTimeout, "idle-timeout", e.IdleTimeout, "silence after which a device's buffer memory is reclaimed")
	return fs
}

// defaultReplayOptions are replay's flag defaults: serve's engine.
func defaultReplayOptions() *replayOptions {
	return &replayOptions{
		engine:    engine.DefaultConfig(),
		holds:     durationList{0, 200 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second},
		fences:    "fences.geojson",
		diffLimit: 50,
	}
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
		Exec: func(_ context.Context, args []string) error {
			files, err := replayArgs(fs, args)
			if err != nil {
				return err
			}
			if len(files) == 0 {
				return errors.New("replay: name at least one capture file")
			}
			o.status = progress.Stderr(o.json)
			res, err := replay(o, files)
			if err != nil {
				return err
			}
			return writeReplay(os.Stdout, o, res)
		},
	}
}

// replayArgs separates the files from flags given after them: flag stops
// at the first argument that is not a flag, but `replay FILE --json` reads
// naturally. After "--" everything is a file.
func replayArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--":
			return append(files, args[1:]...), nil
		case len(a) > 1 && a[0] == '-':
			if err := fs.Parse(args); err != nil {
				return nil, err
			}
			rest := fs.Args()
			if consumed := args[:len(args)-len(rest)]; len(consumed) > 0 && consumed[len(consumed)-1] == "--" {
				return append(files, rest...), nil
			}
			args = rest
		default:
			files = append(files, a)
			args = args[1:]
		}
	}
	return files, nil
}

// replayResult is what a replay found.
type replayResult struct {
	files       []string
	read        capture.Stats
	devices     int
	first, last time.Time // earliest and latest arrival
	fences      int
	rows        []shadow.Row
	baseline    int                   // the row the others are diffed against
	transitions [][]engine.Transition // per strategy, every device's
}

// replayArrival is a captured ping with what orders it among its device's.
type replayArrival struct {
	seq  uint64
	ping engine.Ping
}

// replay reads the captures at paths and runs each device's pings, in the
// order they arrived, through the engine under every hold of o.
func replay(o *replayOptions, paths []string) (*replayResult, error) {
	if len(o.holds) == 0 {
		return nil, errors.New("replay: --holds is empty")
	}
	for i, h := range o.holds {
		if slices.Contains(o.holds[:i], h) {
			return nil, fmt.Errorf("replay: hold %v is listed twice", h)
		}
		c := o.engine
		c.Hold = h
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
	}
	set, err := fence.Load(o.fences)
	if err != nil {
		return nil, err
	}
	res := &replayResult{fences: set.Len()}
	byDevice := make(map[string][]replayArrival)
	minIngest, maxIngest := int64(math.MaxInt64), int64(math.MinInt64)
	status := newStatus(o.status, progress.Options{Label: "replay: reading", Unit: "records"})
	defer status.Stop()
	res.files, res.read, err = capture.ReadFiles(func(r *capture.Record) error {
		status.Add(1)
		minIngest, maxIngest = min(minIngest, r.Ingest), max(maxIngest, r.Ingest)
		byDevice[r.Device] = append(byDevice[r.Device], replayArrival{seq: r.Seq, ping: r.Ping()})
		return nil
	}, paths...)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if len(byDevice) == 0 {
		return nil, fmt.Errorf("replay: no records in %s", strings.Join(res.files, ", "))
	}
	res.devices = len(byDevice)
	res.first, res.last = time.Unix(0, minIngest).UTC(), time.Unix(0, maxIngest).UTC()

	// Instants with a monotonic reading keep the engine's many time
	// subtractions on time.Time's fast path; their wall clock is exact.
	now := time.Now()
	base := now.Add(time.Unix(0, minIngest).Sub(now))
	strategies := shadow.Strategies(o.holds)
	runner, err := shadow.NewRunner(o.engine, set, strategies, base)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	res.transitions = make([][]engine.Transition, len(strategies))
	ids := make([]string, 0, len(byDevice))
	for id := range byDevice {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	status.Restart("replay", "devices", int64(len(ids)), 0)
	var pings []engine.Ping
	for _, id := range ids {
		status.Add(1)
		arr := byDevice[id]
		// Ingest stamps can tie (a coarse clock); seq breaks ties. Across
		// restarts seq starts again at 1, but so does no ingest stamp.
		slices.SortStableFunc(arr, func(a, b replayArrival) int {
			if c := a.ping.Ingest.Compare(b.ping.Ingest); c != 0 {
				return c
			}
			return cmp.Compare(a.seq, b.seq)
		})
		pings = pings[:0]
		for i := range arr {
			pg := arr[i].ping
			pg.Device = id // one string per device, not one per record
			pg.Ingest = base.Add(pg.Ingest.Sub(res.first))
			pings = append(pings, pg)
		}
		delete(byDevice, id) // its memory is not needed any more
		for i, trans := range runner.Device(pings) {
			res.transitions[i] = append(res.transitions[i], trans...)
		}
	}
	for _, s := range runner.Stats() {
		res.rows = append(res.rows, shadow.Row{Stats: s})
	}
	res.baseline = max(slices.Index(o.holds, 0), 0)
	return res, nil
}
