package suite

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/edgefence/edgefence/chart"
	"github.com/edgefence/edgefence/loadgen"
)

// Chart draws the table's medians: pings/s and the broker's CPU µs per
// ping, per broker (the series, in the order the rows name them) and
// scenario (the groups). A broker a scenario does not run has no bar there.
func Chart(rows []*Row, title, subtitle string) *chart.Figure {
	f := &chart.Figure{Title: title, Subtitle: subtitle}
	var scenarios []string
	for _, r := range rows {
		if !slices.Contains(scenarios, r.Scenario) {
			scenarios = append(scenarios, r.Scenario)
		}
		if !slices.Contains(f.Series, r.Broker) {
			f.Series = append(f.Series, r.Broker)
		}
	}
	panel := func(title, ylabel string, format func(float64) string, v func(*loadgen.Result) float64) chart.Panel {
		p := chart.Panel{Title: title, YLabel: ylabel, Groups: scenarios, Format: format}
		for _, sc := range scenarios {
			vals := make([]float64, len(f.Series))
			for i := range vals {
				vals[i] = math.NaN()
			}
			for _, r := range rows {
				if r.Scenario == sc && len(r.Runs) > 0 {
					vals[slices.Index(f.Series, r.Broker)] = median(r.values(v))
				}
			}
			p.Values = append(p.Values, vals)
		}
		return p
	}
	cpu := panel("Broker CPU per ping", "µs per ping, median", func(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }, func(x *loadgen.Result) float64 { return x.CPUPerPingUs })
	cpu.Ticks = func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	f.Panels = []chart.Panel{
		panel("Throughput", "pings/s, median", thousands, func(x *loadgen.Result) float64 { return x.PingsPerSec }),
		cpu,
	}
	return f
}

// writeChart writes the suite's chart as SVG, titled like its table.
func (s *Suite) writeChart(w io.Writer, rows []*Row, took time.Duration) error {
	title := fmt.Sprintf("edgefence loadgen suite: median of %d runs per row", s.Runs)
	if s.Runs == 1 {
		title = "edgefence loadgen suite: one run per row"
	}
	subtitle := fmt.Sprintf("broker pinned to CPU %q, loadgen to another (scripts/bench); whole suite %v", s.BrokerCPU, took.Round(time.Second))
	if s.Quick {
		subtitle += "; --quick: a smoke test, not a measurement"
	}
	return Chart(rows, title, subtitle).WriteSVG(w)
}

// thousands formats a rate to the unit with separators: 84,123.
func thousands(x float64) string {
	s := strconv.FormatFloat(math.Round(x), 'f', 0, 64)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
