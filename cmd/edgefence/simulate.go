package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/fleet"
	"github.com/edgefence/edgefence/internal/cmdhelp"
	"github.com/edgefence/edgefence/internal/flagvalue"
	"github.com/edgefence/edgefence/progress"
	"github.com/edgefence/edgefence/shadow"
)

type simulateOptions struct {
	fleet     fleet.Config
	engine    engine.Config
	holds     shadow.List
	fences    string
	numFences int
	workers   int
	json      bool
	capture   string
	fencesOut string
	chart     string
	status    io.Writer // the status line's terminal; nil: none
}

func simulateFlags(o *simulateOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("edgefence simulate", flag.ContinueOnError)
	c, e := &o.fleet, &o.engine
	fs.Uint64Var(&c.Seed, "seed", c.Seed, "random seed: the same seed gives the same stream and the same table")
	fs.IntVar(&c.Devices, "devices", c.Devices, "fleet size")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "simulated time")
	fs.Float64Var(&c.MinHz, "min-hz", c.MinHz, "slowest report rate per device")
	fs.Float64Var(&c.MaxHz, "max-hz", c.MaxHz, "fastest report rate per device")
	fs.Float64Var(&c.CenterLat, "center-lat", c.CenterLat, "centre of the area")
	fs.Float64Var(&c.CenterLon, "center-lon", c.CenterLon, "centre of the area")
	fs.Float64Var(&c.AreaKm, "area-km", c.AreaKm, "side of the square area")
	fs.Float64Var(&c.MinSpeed, "min-speed", c.MinSpeed, "slowest vehicle, m/s")
	fs.Float64Var(&c.MaxSpeed, "max-speed", c.MaxSpeed, "fastest vehicle, m/s")
	fs.StringVar(&o.fences, "fences", "", "GeoJSON fence file (default: generate --fence-count fences over the area)")
	fs.IntVar(&o.numFences, "fence-count", o.numFences, "fences to generate when --fences is not given")
	fs.DurationVar(&c.ClockOffset, "clock-offset", c.ClockOffset, "per-device constant clock offset, uniform in ±this (0: off)")
	fs.DurationVar(&c.DelayMedian, "delay-median", c.DelayMedian, "lognormal transport delay, median (0: no delay)")
	fs.DurationVar(&c.DelayP99, "delay-p99", c.DelayP99, "lognormal transport delay, 99th percentile")
	fs.Float64Var(&c.HandoverPerH, "handover-per-hour", c.HandoverPerH, "clock steps per device-hour (0: off)")
	fs.DurationVar(&c.StepMin, "step-min", c.StepMin, "smallest clock step")
	fs.DurationVar(&c.StepMax, "step-max", c.StepMax, "largest clock step")
	fs.Float64Var(&c.ColdBootPerH, "cold-boot-per-hour", c.ColdBootPerH, "reboots per device-hour, stamping epoch 0 or 1980 until attached (0: off)")
	fs.DurationVar(&c.AttachMin, "attach-min", c.AttachMin, "shortest time to GPS attach after a boot")
	fs.DurationVar(&c.AttachMax, "attach-max", c.AttachMax, "longest time to GPS attach after a boot")
	fs.Float64Var(&c.OutagePerH, "outage-per-hour", c.OutagePerH, "store-and-forward outages per device-hour (0: off)")
	fs.DurationVar(&c.OutageMin, "outage-min", c.OutageMin, "shortest outage")
	fs.DurationVar(&c.OutageMax, "outage-max", c.OutageMax, "longest outage")
	fs.Float64Var(&c.NewestFirst, "newest-first", c.NewestFirst, "share of backlogs flushed newest-first")
	fs.Var(flagvalue.On{P: &c.GPSNoise}, "gps-noise", "on: real fixes (noise, drift, outliers, parking: the flags below); off: exact fixes")
	fs.Float64Var(&c.AccMin, "acc-min", c.AccMin, "a device's true 68% error radius, metres, uniform from this…")
	fs.Float64Var(&c.AccMax, "acc-max", c.AccMax, "…to this")
	fs.Float64Var(&c.PoorShare, "poor-share", c.PoorShare, "share of devices with a poor receiver, whose radius is…")
	fs.Float64Var(&c.PoorAccMin, "poor-acc-min", c.PoorAccMin, "…uniform from this…")
	fs.Float64Var(&c.PoorAccMax, "poor-acc-max", c.PoorAccMax, "…to this, metres")
	fs.DurationVar(&c.GPSNoiseCorr, "gps-noise-corr", c.GPSNoiseCorr, "correlation time of the error's drift (0: all white, independent per fix)")
	fs.Float64Var(&c.GPSNoiseWhite, "gps-noise-white", c.GPSNoiseWhite, "share of the error's variance that is white, the rest drifting")
	fs.Float64Var(&c.OptimisticShare, "optimistic-share", c.OptimisticShare, "share of devices whose acc is their true radius divided by --optimistic-factor")
	fs.Float64Var(&c.OptimisticFactor, "optimistic-factor", c.OptimisticFactor, "how optimistic those devices' acc is")
	fs.Float64Var(&c.OutlierShare, "outlier-share", c.OutlierShare, "share of fixes that are outliers, reported with an ordinary acc…")
	fs.Float64Var(&c.OutlierMin, "outlier-min", c.OutlierMin, "…off by at least this…")
	fs.Float64Var(&c.OutlierMax, "outlier-max", c.OutlierMax, "…and at most this, metres")
	fs.Float64Var(&c.ParkShare, "park-share", c.ParkShare, "share of devices that park within --park-near metres of a fence edge, inside or out…")
	fs.Float64Var(&c.ParkNear, "park-near", c.ParkNear, "…this close, metres…")
	fs.DurationVar(&c.ParkMin, "park-min", c.ParkMin, "…for at least this…")
	fs.DurationVar(&c.ParkMax, "park-max", c.ParkMax, "…and at most this")
	fs.DurationVar(&c.MatchEarly, "match-early", c.MatchEarly, "an emitted transition matches a true one if its ping was fixed at most this before the true change…")
	fs.DurationVar(&c.MatchLate, "match-late", c.MatchLate, "…or at most this after it (a delayed but correct transition is not a phantom)")
	fs.Var(&o.holds, "holds", "strategies: comma-separated holds (0 is arrival order) or 'adaptive'; a '-noacc' suffix ignores the pings' accuracy (no edge hysteresis)")
	fs.DurationVar(&e.HoldMin, "hold-min", e.HoldMin, "the adaptive hold's lower bound")
	fs.DurationVar(&e.HoldMax, "hold-max", e.HoldMax, "the adaptive hold's upper bound (also while a device's clock is new or stepping)")
	fs.Float64Var(&e.MaxAccuracy, "max-accuracy", e.MaxAccuracy, "largest fix accuracy, metres, that widens fence edges (worse: position alone; 0: accuracy ignored)")
	fs.Float64Var(&e.AccuracyMargin, "accuracy-margin", e.AccuracyMargin, "how many times its accuracy a fix must be across a fence's edge to change the device's state there")
	fs.Float64Var(&e.MaxSpeed, "speed-gate", e.MaxSpeed, "speed gate, m/s: a fix implying a faster jump is set aside until the next agrees (0: off)")
	fs.DurationVar(&e.Dwell, "dwell", e.Dwell, "default dwell (0: off)")
	fs.IntVar(&e.BufferCap, "buffer-cap", e.BufferCap, "reorder buffer capacity per device")
	fs.DurationVar(&e.Skew, "skew-tolerance", e.Skew, "how far ahead of its device's learned clock a stamp may be")
	fs.DurationVar(&e.MaxClockOffset, "max-clock-offset", e.MaxClockOffset, "how far from the server's clock a device's clock may be")
	fs.DurationVar(&e.History, "history", e.History, "how far back late pings are reconciled (0: off)")
	fs.IntVar(&o.workers, "workers", o.workers, "worker goroutines")
	fs.BoolVar(&o.json, "json", o.json, "print JSON instead of a table")
	fs.StringVar(&o.capture, "capture", "", "also write the simulated stream as a capture file (the format of serve --capture), for replay")
	fs.StringVar(&o.fencesOut, "write-fences", "", "also write the generated fences to this GeoJSON file (replay needs them)")
	fs.StringVar(&o.chart, "chart", "", "also write the result as an SVG chart to this file")
	return fs
}

func simulateCommand() *ffcli.Command {
	o := &simulateOptions{
		fleet:     fleet.DefaultConfig(),
		engine:    engine.DefaultConfig(), // serve's: the simulation measures the product's defaults
		holds:     shadow.DefaultList(),
		numFences: 300,
		workers:   runtime.GOMAXPROCS(0),
	}
	fs := simulateFlags(o)
	return &ffcli.Command{
		Name:       "simulate",
		ShortUsage: "edgefence simulate [flags]",
		ShortHelp:  "measure phantom transitions on a simulated fleet, against ground truth",
		LongHelp: "Generate a seeded fleet with real fixes (GPS noise, outliers, parked devices) and\n" +
			"clock and network faults, compute each device's true fence transitions, and run the\n" +
			"same stream through the engine in virtual time under each hold (0 = arrival order),\n" +
			"reporting phantom, reversal, missed, late and lost rates and the historic transitions\n" +
			"late pings revealed; phantoms and missed both raw and on what the fixes can show,\n" +
			"and the parked devices' flip-flops.",
		FlagSet: fs,
		Options: []ff.Option{ff.WithEnvVarPrefix("EDGEFENCE_SIM")},
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cmdhelp.NoArguments("edgefence simulate", args)
			}
			o.status = progress.Stderr(o.json)
			defer exitOnSignal(ctx, "simulate")()
			return simulate(os.Stdout, o)
		},
	}
}

// exitOnSignal ends the process with status 130 when ctx (main's signal
// context, which keeps SIGINT and SIGTERM from ending it) is done: a batch
// run has nothing to finish. Call what it returns when the run ends.
func exitOnSignal(ctx context.Context, name string) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		fmt.Fprintln(os.Stderr, name+": interrupted")
		os.Exit(130)
	})
}

func simulate(w io.Writer, o *simulateOptions) (err error) {
	var set *fence.Set
	if o.fences != "" {
		set, err = fence.Load(o.fences)
	} else {
		geojson := o.fleet.FencesGeoJSON(o.numFences)
		if o.fencesOut != "" {
			if err := os.WriteFile(o.fencesOut, geojson, 0o644); err != nil {
				return fmt.Errorf("write fences: %w", err)
			}
		}
		set, err = fence.Parse(geojson)
	}
	if err != nil {
		return err
	}
	var observe func([]engine.Ping)
	if o.capture != "" {
		c, err := capture.CreatePingWriter(o.capture)
		if err != nil {
			return err
		}
		observe = c.WritePings
		defer func() { err = errors.Join(err, c.Close()) }()
	}
	status := newStatus(o.status, progress.Options{Label: "simulate", Unit: "devices", Total: int64(o.fleet.Devices)})
	res, err := fleet.Run(o.fleet, o.engine, set, o.holds, o.workers, countDevices(status, observe))
	status.Stop()
	if err != nil {
		return err
	}
	if o.chart != "" {
		if err := res.WriteChart(o.chart, &o.fleet, set.Len()); err != nil {
			return err
		}
	}
	if o.json {
		return res.WriteJSON(w, &o.fleet, set.Len())
	}
	return res.WriteTable(w, &o.fleet, set.Len())
}
