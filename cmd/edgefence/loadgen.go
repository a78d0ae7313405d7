package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/internal/cmdhelp"
	"github.com/edgefence/edgefence/internal/flagvalue"
	"github.com/edgefence/edgefence/loadgen"
	"github.com/edgefence/edgefence/loadgen/fencegen"
	"github.com/edgefence/edgefence/loadgen/suite"
	"github.com/edgefence/edgefence/progress"
)

type loadgenOptions struct {
	cfg         loadgen.Config
	fences      int
	writeFences string
	json        bool
	cpuprofile  string
}

func loadgenFlags(o *loadgenOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("edgefence loadgen", flag.ContinueOnError)
	c := &o.cfg
	fs.StringVar(&c.Addr, "addr", c.Addr, "broker's MQTT TCP address (loopback only)")
	fs.IntVar(&c.Conns, "conns", c.Conns, "tracker connections")
	fs.IntVar(&c.DevicesPerConn, "devices-per-conn", c.DevicesPerConn, "devices publishing over each connection")
	fs.Var(flagvalue.Small{P: &c.QoS, Max: 1}, "qos", "QoS of the pings: 0 or 1")
	fs.Float64Var(&c.Rate, "rate", c.Rate, "total pings/s, paced; 0: unthrottled (QoS 1: as fast as PUBACKs return, --window in flight per connection)")
	fs.IntVar(&c.Window, "window", c.Window, "QoS 1 pings in flight per connection at most")
	fs.IntVar(&c.Batch, "batch", c.Batch, "unthrottled: pings per write at most")
	fs.IntVar(&c.Burst, "burst", c.Burst, "paced: pings per write, each connection's sent that many at a time (1: a write per ping; --window at most)")
	fs.IntVar(&c.Workers, "workers", c.Workers, "sending goroutines")
	fs.DurationVar(&c.Warmup, "warmup", c.Warmup, "load before the measured window")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "the measured window")
	fs.DurationVar(&c.Drain, "drain", c.Drain, "after the load, how long to wait for acknowledgements and transitions at most (more than the broker's hold)")
	fs.StringVar(&c.Sub, "sub", c.Sub, "subscriber topic filter whose messages are matched to pings for latency (geofence/# or devices/#); empty: none")
	fs.Var(flagvalue.Small{P: &c.SubQoS, Max: 1}, "sub-qos", "the subscription's QoS: 0 or 1")
	fs.StringVar(&c.SubAddr, "sub-addr", c.SubAddr, "broker's MQTT TCP address for the --sub subscriber (loopback only); empty: --addr")
	fs.IntVar(&o.fences, "fences", o.fences, "generated fences the devices walk across (the broker must load the same: see --write-fences)")
	fs.StringVar(&o.writeFences, "write-fences", "", "write the --fences generated fences as GeoJSON to this file and exit")
	fs.IntVar(&c.CrossEvery, "cross-every", c.CrossEvery, "pings on each side of a fence edge: 1 in this many pings causes a transition")
	fs.StringVar(&c.MetricsURL, "metrics", c.MetricsURL, "the broker's /metrics URL (edgefence); empty: count acknowledgements")
	fs.IntVar(&c.PID, "pid", c.PID, "the broker's process id, for its CPU time and RSS (0: not measured)")
	fs.IntVar(&c.ConnectParallel, "connect-parallel", c.ConnectParallel, "connections opened concurrently")
	fs.DurationVar(&c.ConnectTimeout, "connect-timeout", c.ConnectTimeout, "for the whole connect phase")
	fs.DurationVar(&c.AckTimeout, "ack-timeout", c.AckTimeout, "a QoS 1 ping unacknowledged this long is counted unacked")
	fs.StringVar(&c.Tag, "tag", c.Tag, "prefix of client and device ids (default: random)")
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "seed of the devices' starting positions")
	fs.BoolVar(&o.json, "json", false, "print the result as JSON")
	fs.StringVar(&o.cpuprofile, "cpuprofile", "", "write loadgen's own CPU profile to this file (to check it is not the bottleneck)")
	return fs
}

func loadgenCommand() *ffcli.Command {
	o := &loadgenOptions{cfg: loadgen.DefaultConfig(), fences: 1000}
	fs := loadgenFlags(o)
	subs := []*ffcli.Command{suiteCommand()}
	return &ffcli.Command{
		Name:       "loadgen",
		ShortUsage: "edgefence loadgen [flags] | edgefence loadgen suite [flags]",
		ShortHelp:  "drive a broker with simulated trackers over MQTT and measure it",
		LongHelp: "Open --conns MQTT 3.1.1 connections to a running broker on loopback, publish\n" +
			"pings of devices walking back and forth across the edges of generated fences\n" +
			"(1 in --cross-every pings causes a transition), paced at --rate or unthrottled,\n" +
			"and report the broker's pings/s, CPU per ping and RSS (--pid, --metrics) and the\n" +
			"latency from a ping's send instant to the receipt of its transition on --sub.\n" +
			"Bounded: connect timeout, --warmup + --duration + --drain.\n\n" +
			"The broker must load the same fences: edgefence loadgen --write-fences FILE.\n" +
			"'edgefence loadgen suite' runs the whole side-by-side comparison (scripts/bench).",
		FlagSet:     fs,
		Subcommands: subs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cmdhelp.UsageError{Cmd: "edgefence loadgen", Err: cmdhelp.Unknown(subs, args[0])}
			}
			if o.fences < 1 {
				return fmt.Errorf("--fences %d: want at least 1", o.fences)
			}
			if o.writeFences != "" {
				_, err := fencegen.Write(o.writeFences, o.fences)
				return err
			}
			cfg := o.cfg
			cfg.Fences = fencegen.Generate(o.fences)
			cfg.Progress = os.Stderr
			if w := progress.Stderr(o.json); w != nil {
				cfg.Status = progress.New(w, progress.Options{Width: progress.Width(os.Stderr)})
				cfg.Progress = cfg.Status // log lines print above the status line
			}
			if o.cpuprofile != "" {
				f, err := os.Create(o.cpuprofile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			res, err := loadgen.Run(ctx, cfg)
			if res != nil {
				if o.json {
					enc := json.NewEncoder(os.Stdout)
					enc.SetIndent("", "  ")
					if err := enc.Encode(res); err != nil {
						return err
					}
				} else {
					res.Print(os.Stdout)
				}
			}
			return err
		},
	}
}

func suiteCommand() *ffcli.Command {
	o := suite.Default()
	fs := flag.NewFlagSet("edgefence loadgen suite", flag.ContinueOnError)
	fs.StringVar(&o.Bin, "bin", o.Bin, "the edgefence binary to run as the broker (default: this one)")
	fs.StringVar(&o.Mosquitto, "mosquitto", o.Mosquitto, "the mosquitto binary (empty: skip Mosquitto)")
	fs.StringVar(&o.BrokerCPU, "broker-cpu", o.BrokerCPU, "CPU list the broker is pinned to with taskset (empty: no pinning)")
	fs.IntVar(&o.Runs, "runs", o.Runs, "runs of each row (the table shows min/median/max)")
	fs.StringVar(&o.Out, "out", o.Out, "directory for results.jsonl, table.md, chart.svg and broker logs")
	fs.StringVar(&o.Only, "only", o.Only, "comma-separated scenarios to run: ceiling, paced, latency, overload, headroom (empty: all)")
	fs.Float64Var(&o.Ceiling, "ceiling", o.Ceiling, "pings/s the latency and headroom loads are shares of (50 %, 20 %) when the ceiling scenario is not run")
	fs.BoolVar(&o.Quick, "quick", o.Quick, "short windows and small loads: a smoke test of the suite, not a measurement")
	fs.StringVar(&o.Chart, "chart", o.Chart, "write the table's pings/s and CPU per ping as an SVG chart to this file (default: chart.svg in --out)")
	fs.StringVar(&o.Profile, "profile", o.Profile, "write a 5 s CPU profile of edgefence's first ceiling run to this file (--engine=off: FILE.off; the first run of other scenarios: FILE.<scenario>)")
	return &ffcli.Command{
		Name:       "suite",
		ShortUsage: "edgefence loadgen suite [flags]",
		ShortHelp:  "run edgefence (engine on and off) and Mosquitto side by side under the same loads",
		LongHelp: "Start each broker as its own process (pinned with taskset to --broker-cpu),\n" +
			"run the scenarios --runs times each against it, and print the table of\n" +
			"min/median/max with the ratios and the bars. Run it pinned to another CPU:\n" +
			"scripts/bench does.",
		FlagSet: fs,
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cmdhelp.NoArguments("edgefence loadgen suite", args)
			}
			if o.Bin == "" {
				exe, err := os.Executable()
				if err != nil {
					return err
				}
				o.Bin = exe
			}
			o.Log = os.Stderr
			if w := progress.Stderr(false); w != nil {
				o.Status = progress.New(w, progress.Options{Width: progress.Width(os.Stderr)})
				o.Log = o.Status // log lines print above the status line
			}
			return suite.Run(ctx, o, os.Stdout)
		},
	}
}
