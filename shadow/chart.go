package shadow

import (
	"io"
	"math"
	"strconv"
	"time"

	"github.com/edgefence/edgefence/chart"
)

// Chart draws a simulation's rows (with ground truth): phantom, missed
// and lost-to-late rates per strategy as grouped bars, and the added
// latency's p50 and p99 beside them. The strategies come from the rows,
// so every strategy run is drawn.
func Chart(title, subtitle string, rows []Row) *chart.Figure {
	f := &chart.Figure{Title: title, Subtitle: subtitle}
	rates := chart.Panel{
		Title:  "Transitions against ground truth",
		YLabel: "percent",
		Groups: []string{"phantom\nof emitted", "missed\nof true", "lost to late\nof pings"},
		Values: make([][]float64, 3),
		Format: func(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) + "%" }, // as the table
		Ticks:  func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "%" },
	}
	latency := chart.Panel{
		Title:  "Added latency",
		YLabel: "ms, commit − arrival",
		Groups: []string{"p50", "p99"},
		Values: make([][]float64, 2),
		Format: func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) },
	}
	pct := func(x float64) float64 { return roundTo(100*x, 3) }
	ms := func(d time.Duration) float64 { return roundTo(float64(d)/1e6, 1) }
	for i := range rows {
		r := &rows[i]
		f.Series = append(f.Series, r.Name)
		rates.Values[0] = append(rates.Values[0], pct(r.PhantomRate()))
		rates.Values[1] = append(rates.Values[1], pct(Rate(r.Missed, r.Truth)))
		rates.Values[2] = append(rates.Values[2], pct(Rate(r.Lost, r.Pings)))
		latency.Values[0] = append(latency.Values[0], ms(r.Percentile(50)))
		latency.Values[1] = append(latency.Values[1], ms(r.Percentile(99)))
	}
	f.Panels = []chart.Panel{rates, latency}
	return f
}

// WriteChart writes Chart's figure as SVG.
func WriteChart(w io.Writer, title, subtitle string, rows []Row) error {
	return Chart(title, subtitle, rows).WriteSVG(w)
}

// roundTo rounds x to digits decimals, as the table prints it.
func roundTo(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}
