package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/edgefence/edgefence/fleet"
	"github.com/edgefence/edgefence/shadow"
)

// writeSimulateChart writes res as simulate --chart's SVG, titled with
// the fleet's parameters and seed so that a chart says what run it is.
func writeSimulateChart(path string, o *simulateOptions, fences int, res *fleet.Result) (err error) {
	c := &o.fleet
	title := fmt.Sprintf("edgefence simulate: %d devices × %v, %d fences, seed %d", c.Devices, c.Duration, fences, c.Seed)
	subtitle := fmt.Sprintf("%d pings, %d true transitions\nreports %g–%g Hz; clock offset ±%v; delay median %v, p99 %v; %g handovers, %g cold boots, %g outages per device-hour",
		res.Pings, res.Truth, c.MinHz, c.MaxHz, c.ClockOffset, c.DelayMedian, c.DelayP99, c.HandoverPerH, c.ColdBootPerH, c.OutagePerH)
	if c.GPSNoise {
		subtitle += "; GPS noise"
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	if err := shadow.WriteChart(f, title, subtitle, res.Rows); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return nil
}
