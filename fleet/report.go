package fleet

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"

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
	fmt.Fprintf(w, "faults: %d clock steps, %d cold-boot pings, %d outages (%d newest-first, %d backlog pings), %d reordered pings, %d delayed > 500ms\n",
		fc["clock_steps"], fc["cold_boot_pings"], fc["outages"], fc["outages_newest_first"], fc["backlog_pings"], fc["reordered_pings"], fc["delayed_over_500ms_pings"])
	if c.GPSNoise {
		fmt.Fprintf(w, "fixes: %g–%g m (%g%% of devices %g–%g m, %g%% optimistic ÷%g), drift %v (%g%% white), %d outliers, %d devices parked at an edge (%.1f device-hours)\n",
			c.AccMin, c.AccMax, 100*c.PoorShare, c.PoorAccMin, c.PoorAccMax, 100*c.OptimisticShare, c.OptimisticFactor,
			c.GPSNoiseCorr, 100*c.GPSNoiseWhite, r.Faults.Outliers, r.Faults.Parked, r.ParkedHours())
	}
	fmt.Fprintln(w)
	if err := shadow.WriteTable(w, r.Rows); err != nil {
		return err
	}
	return r.writeScoring(w)
}

// writeScoring prints the raw and the observable scores side by side,
// with the parked devices' flip-flops.
func (r *Result) writeScoring(w io.Writer) error {
	fmt.Fprintf(w, "\nscoring: raw (every transition) and observable (what the fixes can show); %d of %d true transitions ambiguous (%s)\n\n",
		r.Ambiguous, r.Truth, pct(shadow.Rate(r.Ambiguous, r.Truth)))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "strategy\tphantom raw\tobservable\tmissed raw\tobservable\texcused\tparked phantoms\tflip-flops\tper parked device-hour\t")
	for i := range r.Rows {
		row, o := &r.Rows[i], &r.Observable[i]
		perH := "-"
		if h := r.ParkedHours(); h > 0 {
			perH = fmt.Sprintf("%.3f", float64(o.FlipFlops)/h)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t\n", row.Name,
			pct(row.PhantomRate()), pct(r.ObservablePhantomRate(i)), pct(shadow.Rate(row.Missed, row.Truth)), pct(r.ObservableMissedRate(i)),
			o.Excused, o.ParkedPhantoms, o.FlipFlops, perH)
	}
	return tw.Flush()
}

// ObservablePhantomRate is strategy i's observable phantoms ÷ its emitted
// transitions (the raw rate's denominator).
func (r *Result) ObservablePhantomRate(i int) float64 {
	return shadow.Rate(r.Observable[i].Phantoms, r.Rows[i].Transitions)
}

// ObservableMissedRate is strategy i's missed observable transitions ÷ the
// observable true transitions.
func (r *Result) ObservableMissedRate(i int) float64 {
	return shadow.Rate(r.Observable[i].Missed, r.Truth-r.Ambiguous)
}

func pct(f float64) string { return fmt.Sprintf("%.3f%%", 100*f) }

// WriteJSON prints r as one JSON object: the run (fleet, faults, wall
// time) and the strategies' figures.
func (r *Result) WriteJSON(w io.Writer, c *Config, fences int) error {
	meta := map[string]any{
		"seed": c.Seed, "devices": c.Devices, "duration": c.Duration.String(),
		"fences": fences, "pings": r.Pings, "truth_transitions": r.Truth,
		"faults": r.FaultCounts(), "wall_seconds": r.Wall.Seconds(),
		"gps_noise": c.GPSNoise, "ambiguous_transitions": r.Ambiguous,
		"ambiguous_rate": shadow.Rate(r.Ambiguous, r.Truth), "parked_device_hours": r.ParkedHours(),
	}
	type row struct {
		shadow.JSONRow
		ObsPhantoms      int64    `json:"observable_phantoms"`
		ObsPhantomRate   float64  `json:"observable_phantom_rate"`
		ObsMissed        int64    `json:"observable_missed"`
		ObsMissedRate    float64  `json:"observable_missed_rate"`
		Excused          int64    `json:"excused"`
		ParkedPhantoms   int64    `json:"parked_phantoms"`
		FlipFlops        int64    `json:"parked_flip_flops"`
		FlipFlopsPerDevH *float64 `json:"parked_flip_flops_per_device_hour,omitempty"`
	}
	rows := make([]any, len(r.Rows))
	for i := range r.Rows {
		o := &r.Observable[i]
		x := row{JSONRow: shadow.NewJSONRow(&r.Rows[i]), ObsPhantoms: o.Phantoms, ObsPhantomRate: r.ObservablePhantomRate(i),
			ObsMissed: o.Missed, ObsMissedRate: r.ObservableMissedRate(i), Excused: o.Excused,
			ParkedPhantoms: o.ParkedPhantoms, FlipFlops: o.FlipFlops}
		if h := r.ParkedHours(); h > 0 {
			perH := float64(o.FlipFlops) / h
			x.FlipFlopsPerDevH = &perH
		}
		rows[i] = x
	}
	return shadow.WriteJSONRows(w, meta, rows)
}

// WriteChart writes r as an SVG chart to path, titled with the fleet's
// parameters and seed so that a chart says what run it is.
func (r *Result) WriteChart(path string, c *Config, fences int) (err error) {
	title := fmt.Sprintf("edgefence simulate: %s devices × %v, %d fences, seed %d", thousands(int64(c.Devices)), c.Duration, fences, c.Seed)
	subtitle := fmt.Sprintf("%s pings, %s true transitions\nreports %g–%g Hz; clock offset ±%v; delay median %v, p99 %v; %g handovers, %g cold boots, %g outages per device-hour",
		thousands(r.Pings), thousands(r.Truth), c.MinHz, c.MaxHz, c.ClockOffset, c.DelayMedian, c.DelayP99, c.HandoverPerH, c.ColdBootPerH, c.OutagePerH)
	if c.GPSNoise {
		subtitle += fmt.Sprintf("; GPS noise %g–%g m, drifting %v, outliers, parking", c.AccMin, c.AccMax, c.GPSNoiseCorr)
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
