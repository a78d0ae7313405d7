package fleet

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/edgefence/edgefence/shadow"
)

// WriteTable prints r as edgefence simulate does: the fleet and its
// injected faults on two lines, then the strategies' table. fences is
// how many fences the run had.
func (r *Result) WriteTable(w io.Writer, c *Config, fences int) error {
	fmt.Fprintf(w, "fleet: %d devices × %v, %d fences, seed %d: %d pings, %d true transitions (%.1fs wall, %.0f pings/s per strategy)\n",
		c.Devices, c.Duration, fences, c.Seed, r.Pings, r.Truth, r.Wall.Seconds(),
		float64(r.Pings)*float64(len(r.Rows))/r.Wall.Seconds())
	fc := r.FaultCounts()
	fmt.Fprintf(w, "faults: %d clock steps, %d cold-boot pings, %d outages (%d newest-first, %d backlog pings), %d reordered pings, %d delayed > 500ms\n\n",
		fc["clock_steps"], fc["cold_boot_pings"], fc["outages"], fc["outages_newest_first"], fc["backlog_pings"], fc["reordered_pings"], fc["delayed_over_500ms_pings"])
	return shadow.WriteTable(w, r.Rows)
}

// WriteJSON prints r as one JSON object: the run (fleet, faults, wall
// time) and the strategies' figures.
func (r *Result) WriteJSON(w io.Writer, c *Config, fences int) error {
	meta := map[string]any{
		"seed": c.Seed, "devices": c.Devices, "duration": c.Duration.String(),
		"fences": fences, "pings": r.Pings, "truth_transitions": r.Truth,
		"faults": r.FaultCounts(), "wall_seconds": r.Wall.Seconds(),
	}
	return shadow.WriteJSON(w, meta, r.Rows)
}

// WriteChart writes r as an SVG chart to path, titled with the fleet's
// parameters and seed so that a chart says what run it is.
func (r *Result) WriteChart(path string, c *Config, fences int) (err error) {
	title := fmt.Sprintf("edgefence simulate: %s devices × %v, %d fences, seed %d", thousands(int64(c.Devices)), c.Duration, fences, c.Seed)
	subtitle := fmt.Sprintf("%s pings, %s true transitions\nreports %g–%g Hz; clock offset ±%v; delay median %v, p99 %v; %g handovers, %g cold boots, %g outages per device-hour",
		thousands(r.Pings), thousands(r.Truth), c.MinHz, c.MaxHz, c.ClockOffset, c.DelayMedian, c.DelayP99, c.HandoverPerH, c.ColdBootPerH, c.OutagePerH)
	if c.GPSNoise {
		subtitle += "; GPS noise"
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	defer func() { err = errors.Join(err, f.Close()) }()
	if err := shadow.WriteChart(f, title, subtitle, r.Rows); err != nil {
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
