package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/edgefence/edgefence/fleet"
	"github.com/edgefence/edgefence/shadow"
)

// writeSimulateChart writes res as simulate --chart's SVG, titled with
// the fleet's parameters and seed so that a chart says what run it is.
func writeSimulateChart(path string, o *simulateOptions, fences int, res *fleet.Result) (err error) {
	c := &o.fleet
	title := fmt.Sprintf("edgefence simulate: %s devices × %v, %d fences, seed %d", thousands(int64(c.Devices)), c.Duration, fences, c.Seed)
	subtitle := fmt.Sprintf("%s pings, %s true transitions\nreports %g–%g Hz; clock offset ±%v; delay median %v, p99 %v; %g handovers, %g cold boots, %g outages per device-hour",
		thousands(res.Pings), thousands(res.Truth), c.MinHz, c.MaxHz, c.ClockOffset, c.DelayMedian, c.DelayP99, c.HandoverPerH, c.ColdBootPerH, c.OutagePerH)
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

// thousands writes n with separators, as a person reads it: 72,014,676.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
