package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// bar is a <rect class="bar"> as a reader of the SVG finds it.
type bar struct {
	series, group string
	value, height float64
	x             float64
	title         string
}

// tb is what parse and render need of a *testing.T or a *rapid.T.
type tb interface {
	Helper()
	Fatal(...any)
	Fatalf(string, ...any)
}

// parse checks that svg is well-formed XML with an <svg> root and returns
// its bars and all its character data.
func parse(t tb, svg []byte) (bars []bar, text string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	var sb strings.Builder
	var cur *bar
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if depth == 0 && tok.Name.Local != "svg" {
				t.Fatalf("root is <%s>", tok.Name.Local)
			}
			depth++
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Name.Local] = a.Value
			}
			if tok.Name.Local == "rect" && attr["class"] == "bar" {
				b := bar{series: attr["data-series"], group: attr["data-group"]}
				b.value, _ = strconv.ParseFloat(attr["data-value"], 64)
				b.x, _ = strconv.ParseFloat(attr["x"], 64)
				b.height, err = strconv.ParseFloat(attr["height"], 64)
				if err != nil {
					t.Fatalf("bar height %q", attr["height"])
				}
				bars = append(bars, b)
				cur = &bars[len(bars)-1]
			}
		case xml.EndElement:
			depth--
			if tok.Name.Local == "rect" {
				cur = nil
			}
		case xml.CharData:
			sb.Write(tok)
			if cur != nil {
				cur.title += string(tok)
			}
		}
	}
	return bars, sb.String()
}

func render(t tb, f *Figure) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestBarsPerSeriesPerGroupWithHeightsProportionalToValues(t *testing.T) {
	f := &Figure{
		Title:  "t",
		Series: []string{"a", "b", "c"},
		Panels: []Panel{
			{Title: "rates", YLabel: "percent", Groups: []string{"x", "y"}, Values: [][]float64{{10, 5, 0}, {2.5, 40, 20}}},
			{Title: "latency", YLabel: "ms", Groups: []string{"p50"}, Values: [][]float64{{100, 300, 200}}},
		},
	}
	bars, _ := parse(t, render(t, f))
	if len(bars) != 9 {
		t.Fatalf("%d bars, want 3 series × 3 groups", len(bars))
	}
	byKey := map[string]bar{}
	for _, b := range bars {
		byKey[b.series+"/"+b.group] = b
	}
	// Within a panel heights are in the values' ratio (to the SVG's
	// thousandths of a pixel); a zero is flat.
	if h := byKey["b/y"].height / byKey["a/y"].height; math.Abs(h/16-1) > 1e-4 {
		t.Errorf("40 vs 2.5 drawn %v× as tall, want 16×", h)
	}
	if h := byKey["a/x"].height / byKey["b/x"].height; math.Abs(h/2-1) > 1e-4 {
		t.Errorf("10 vs 5 drawn %v× as tall, want 2×", h)
	}
	if byKey["c/x"].height != 0 {
		t.Errorf("a zero is %v tall", byKey["c/x"].height)
	}
	if h := byKey["b/p50"].height / byKey["a/p50"].height; math.Abs(h/3-1) > 1e-4 {
		t.Errorf("300 vs 100 drawn %v× as tall, want 3×", h)
	}
	// The tallest bar fits the plot: the axis reaches at least its value.
	for _, b := range bars {
		if b.height > plotHeight+1e-9 {
			t.Errorf("%s/%s is %v tall, the plot %d", b.series, b.group, b.height, plotHeight)
		}
	}
	if b := byKey["b/y"]; b.value != 40 || !strings.Contains(b.title, "b, y: 40") {
		t.Errorf("bar b/y says %v, %q", b.value, b.title)
	}
}

func TestNamesAreEscaped(t *testing.T) {
	evil := `<script>alert("x")</script> & 'q'`
	f := &Figure{
		Title:    evil,
		Subtitle: "sub " + evil,
		Series:   []string{evil, "plain"},
		Panels:   []Panel{{Title: evil, YLabel: evil, Groups: []string{evil + "\nsecond line"}, Values: [][]float64{{1, 2}}}},
	}
	svg := render(t, f)
	if bytes.Contains(svg, []byte("<script")) {
		t.Fatalf("unescaped markup in\n%s", svg)
	}
	bars, text := parse(t, svg)
	if len(bars) != 2 || bars[0].series != evil || bars[0].group != evil+" second line" {
		t.Fatalf("bars %+v", bars)
	}
	if strings.Count(text, evil) < 6 { // title ×2, subtitle, legend, panel title, axis label, group, bar titles
		t.Fatalf("the name does not read back from the text:\n%s", text)
	}
}

func TestMissingValuesDrawNoBar(t *testing.T) {
	f := &Figure{Title: "t", Series: []string{"a", "b", "c"}, Panels: []Panel{{
		Groups: []string{"x", "y"}, Values: [][]float64{{1, math.NaN(), 3}, {4}},
	}}}
	bars, _ := parse(t, render(t, f))
	var got []string
	for _, b := range bars {
		got = append(got, b.series+"/"+b.group)
	}
	if strings.Join(got, " ") != "a/x c/x a/y" {
		t.Fatalf("bars %v", got)
	}
	// A group packs the bars it has: no gap where b is missing.
	if d := bars[1].x - bars[0].x; d != barWidth {
		t.Fatalf("c is %v right of a, want %d", d, barWidth)
	}
}

func TestAnEmptyFigureIsAnError(t *testing.T) {
	if err := (&Figure{Title: "t"}).WriteSVG(io.Discard); !errors.Is(err, ErrEmpty) {
		t.Fatalf("err %v", err)
	}
	// All zeros is a figure, with flat bars.
	bars, _ := parse(t, render(t, &Figure{Series: []string{"a"}, Panels: []Panel{{Groups: []string{"x"}, Values: [][]float64{{0}}}}}))
	if len(bars) != 1 || bars[0].height != 0 {
		t.Fatalf("bars %+v", bars)
	}
}

// The axis always reaches the largest value in a few round steps.
func TestNiceTicksCoverTheLargestValue(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.Float64Range(1e-6, 1e12).Draw(t, "max")
		step, n := niceTicks(v)
		if step*float64(n) < v*(1-1e-9) || n < 1 || n > 10 {
			t.Fatalf("max %v: %d steps of %v", v, n, step)
		}
		m := step / math.Pow(10, math.Floor(math.Log10(step)+1e-12))
		if r := math.Round(m); math.Abs(m-r) > 1e-6 || (r != 1 && r != 2 && r != 5) {
			t.Fatalf("step %v is not 1, 2 or 5 × 10^k", step)
		}
	})
}

// Any figure, whatever its names and values, is well-formed SVG whose
// bars never leave the plot.
func TestAnyFigureIsWellFormed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		name := rapid.StringN(0, 12, -1)
		ns := rapid.IntRange(1, 6).Draw(t, "series")
		ng := rapid.IntRange(1, 4).Draw(t, "groups")
		f := &Figure{Title: name.Draw(t, "title"), Subtitle: name.Draw(t, "subtitle")}
		for range ns {
			f.Series = append(f.Series, name.Draw(t, "series name"))
		}
		p := Panel{Title: name.Draw(t, "panel"), YLabel: name.Draw(t, "ylabel")}
		for range ng {
			p.Groups = append(p.Groups, name.Draw(t, "group"))
			p.Values = append(p.Values, rapid.SliceOfN(rapid.Float64Range(0, 1e9), ns, ns).Draw(t, "values"))
		}
		f.Panels = []Panel{p}
		bars, _ := parse(t, render(t, f))
		if len(bars) != ns*ng {
			t.Fatalf("%d bars, want %d", len(bars), ns*ng)
		}
		for _, b := range bars {
			if b.height < 0 || b.height > plotHeight+1e-9 {
				t.Fatalf("bar %+v", b)
			}
		}
	})
}
