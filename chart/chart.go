// Package chart draws grouped bar charts as standalone SVG: panels side
// by side, each with its own axis and unit, the bars of every series in
// each group, one legend for all. The output needs no script, font or
// stylesheet: a browser, an image viewer or GitHub's README shows it as
// it is, and every bar carries its value as text and as a tooltip.
package chart

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Figure is a chart: a title, a legend of series, and panels.
type Figure struct {
	Title    string
	Subtitle string   // lines under the title ("\n" between them); "": none
	Series   []string // the legend, one colour each; a group's bars are in this order
	Panels   []Panel
}

// Panel is one axis of grouped bars.
type Panel struct {
	Title  string
	YLabel string   // the axis's label, with its unit
	Groups []string // the categories along the bottom ("\n" between lines)
	// Values holds each group's value per series: Values[g][s]. A NaN (or a
	// short row) draws no bar: the series was not measured in that group.
	Values [][]float64
	Format func(float64) string // bar labels (and ticks, without Ticks); nil: strconv's 'g' to 4 digits
	Ticks  func(float64) string // the axis's numbers; nil: Format
}

// Geometry, in SVG user units (pixels).
const (
	barWidth     = 18
	groupGap     = 22
	plotHeight   = 260
	axisLeft     = 64 // room for the ticks and the axis label
	panelGap     = 40
	margin       = 20
	legendRow    = 20
	labelRoom    = 44 // above the tallest bar, for its value label
	groupLabelH  = 48 // two lines of a group's name
	subtitleLine = 18
)

// textWidth estimates the width of 12-pixel sans-serif text: wide enough
// that the figure holds its lines in common fonts.
func textWidth(s string) int { return len([]rune(s)) * 13 / 2 }

// palette is Okabe and Ito's, readable with colour-vision deficiencies.
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"}

// Colour is series i's fill.
func Colour(i int) string { return palette[i%len(palette)] }

// ErrEmpty is returned for a figure with no series or no panels.
var ErrEmpty = errors.New("chart: no series or no panels")

// WriteSVG writes f as one SVG document.
func (f *Figure) WriteSVG(w io.Writer) error {
	if len(f.Series) == 0 || len(f.Panels) == 0 {
		return ErrEmpty
	}
	var b strings.Builder
	var sub []string
	if f.Subtitle != "" {
		sub = strings.Split(f.Subtitle, "\n")
	}
	top := margin + 24.0 + float64(len(sub))*subtitleLine
	legendTop := top + 14
	// The legend wraps to the figure's width, which the panels set.
	width := margin
	for i := range f.Panels {
		width += f.Panels[i].width(len(f.Series))
		if i > 0 {
			width += panelGap
		}
	}
	width += margin
	width = max(width, 2*margin+textWidth(f.Title)*3/2) // 16 px bold
	for _, l := range sub {
		width = max(width, 2*margin+textWidth(l))
	}
	legendW := 0
	for _, s := range f.Series {
		legendW = max(legendW, 24+textWidth(s)+16)
	}
	perRow := max(1, (width-2*margin)/max(legendW, 1))
	rows := (len(f.Series) + perRow - 1) / perRow
	panelTop := legendTop + float64(rows*legendRow) + 18
	height := int(panelTop) + 24 + labelRoom + plotHeight + groupLabelH + margin

	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(f.Title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="%.0f" font-size="16" font-weight="bold">%s</text>`+"\n", margin, margin+16.0, esc(f.Title))
	for i, l := range sub {
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" fill="#444444">%s</text>`+"\n", margin, margin+36.0+float64(i)*subtitleLine, esc(l))
	}
	b.WriteString(`<g class="legend">` + "\n")
	for i, s := range f.Series {
		x := margin + (i%perRow)*legendW
		y := legendTop + float64(i/perRow*legendRow)
		fmt.Fprintf(&b, `<rect x="%d" y="%.0f" width="14" height="14" fill="%s"/><text x="%d" y="%.0f">%s</text>`+"\n",
			x, y, Colour(i), x+20, y+11, esc(s))
	}
	b.WriteString("</g>\n")
	x := float64(margin)
	for i := range f.Panels {
		f.Panels[i].write(&b, f.Series, x, panelTop)
		x += float64(f.Panels[i].width(len(f.Series)) + panelGap)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (p *Panel) width(series int) int {
	w := axisLeft + groupGap
	for g := range p.Groups {
		w += groupGap + p.groupWidth(g, series)
	}
	return w
}

// groupWidth is the room group g takes: its bars, or its name when wider.
func (p *Panel) groupWidth(g, series int) int {
	w := p.groupBars(g, series) * barWidth
	for _, l := range strings.Split(p.Groups[g], "\n") {
		w = max(w, textWidth(l))
	}
	return w
}

// groupBars is how many bars group g draws: the series it has values of
// (at least one slot, so that an empty group keeps its label's room).
// Groups are packed: a series missing from a group leaves no gap.
func (p *Panel) groupBars(g, series int) int {
	n := 0
	for s := range series {
		if _, ok := p.value(g, s); ok {
			n++
		}
	}
	return max(n, 1)
}

func (p *Panel) format(v float64) string {
	if p.Format != nil {
		return p.Format(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// value is group g's value of series s, and whether it has one.
func (p *Panel) value(g, s int) (float64, bool) {
	if g >= len(p.Values) || s >= len(p.Values[g]) {
		return 0, false
	}
	v := p.Values[g][s]
	return v, !math.IsNaN(v) && !math.IsInf(v, 0)
}

func (p *Panel) write(b *strings.Builder, series []string, left, top float64) {
	maxV := 0.0
	for g := range p.Groups {
		for s := range series {
			if v, ok := p.value(g, s); ok {
				maxV = max(maxV, v)
			}
		}
	}
	step, ticks := niceTicks(maxV)
	scaleTop := step * float64(ticks)
	plotTop := top + 24 + labelRoom
	base := plotTop + plotHeight // the zero line
	x0 := left + axisLeft
	right := left + float64(p.width(len(series)))
	fmt.Fprintf(b, `<g class="panel">`+"\n")
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="14" font-weight="bold">%s</text>`+"\n", left, top+14, esc(p.Title))
	// Grid lines and ticks.
	for i := 0; i <= ticks; i++ {
		v := tidy(step * float64(i))
		y := base - v/scaleTop*plotHeight
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#dddddd"/>`+"\n", x0, y, right, y)
		tick := p.format(v)
		if p.Ticks != nil {
			tick = p.Ticks(v)
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end" fill="#444444">%s</text>`+"\n", x0-6, y+4, esc(tick))
	}
	// The axis label, turned to read upwards along the axis.
	cy := plotTop + plotHeight/2
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n",
		left+12, cy, left+12, cy, esc(p.YLabel))
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#000000"/>`+"\n", x0, plotTop-labelRoom/2, x0, base)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#000000"/>`+"\n", x0, base, right, base)
	gx := x0
	for g, name := range p.Groups {
		gx += groupGap
		gw := float64(p.groupWidth(g, len(series)))
		cx := gx + gw/2
		bars0 := cx - float64(p.groupBars(g, len(series))*barWidth)/2 // the bars are centred under the name
		flat := strings.ReplaceAll(name, "\n", " ")
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">`, cx, base+18)
		for i, l := range strings.Split(name, "\n") {
			dy := 0
			if i > 0 {
				dy = 14
			}
			fmt.Fprintf(b, `<tspan x="%.1f" dy="%d">%s</tspan>`, cx, dy, esc(l))
		}
		b.WriteString("</text>\n")
		slot := 0
		for s := range series {
			v, ok := p.value(g, s)
			if !ok {
				continue
			}
			h := 0.0
			if scaleTop > 0 {
				h = max(v, 0) / scaleTop * plotHeight
			}
			bx := bars0 + float64(slot*barWidth)
			slot++
			label := p.format(v)
			fmt.Fprintf(b, `<rect class="bar" data-series="%s" data-group="%s" data-value="%s" x="%.1f" y="%.3f" width="%d" height="%.3f" fill="%s"><title>%s, %s: %s</title></rect>`+"\n",
				esc(series[s]), esc(flat), strconv.FormatFloat(v, 'g', -1, 64), bx+1, base-h, barWidth-2, h, Colour(s),
				esc(series[s]), esc(flat), esc(label))
			tx, ty := bx+barWidth/2+4, base-h-4
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="10" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n", tx, ty, tx, ty, esc(label))
		}
		gx += gw
	}
	b.WriteString("</g>\n")
}

// niceTicks divides [0, maxV] into a few steps of 1, 2 or 5 times a power
// of ten that reach maxV: axis numbers a person reads at a glance.
func niceTicks(maxV float64) (step float64, ticks int) {
	if maxV <= 0 || math.IsNaN(maxV) || math.IsInf(maxV, 0) {
		return 1, 1
	}
	raw := maxV / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	ticks = int(math.Ceil(maxV/step - 1e-9))
	return step, max(ticks, 1)
}

// tidy drops the binary noise of a multiple of a decimal step
// (0.30000000000000004 is 0.3).
func tidy(v float64) float64 {
	t, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return t
}

// esc escapes text for XML character data and attribute values.
func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}
