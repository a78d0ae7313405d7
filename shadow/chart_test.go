package shadow

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"testing"
	"time"
)

// svgBars reads the bars of a chart back from its SVG, failing on
// anything that is not well-formed XML.
func svgBars(t *testing.T, svg []byte) map[string]float64 {
	t.Helper()
	heights := map[string]float64{}
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return heights
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		el, ok := tok.(xml.StartElement)
		if !ok || el.Name.Local != "rect" {
			continue
		}
		attr := map[string]string{}
		for _, a := range el.Attr {
			attr[a.Name.Local] = a.Value
		}
		if attr["class"] != "bar" {
			continue
		}
		key := attr["data-series"] + "/" + attr["data-group"]
		if _, dup := heights[key]; dup {
			t.Fatalf("two bars for %s", key)
		}
		heights[key], err = strconv.ParseFloat(attr["height"], 64)
		if err != nil {
			t.Fatal(err)
		}
	}
}

func chartRow(name string, phantoms, missed, lost int64, p50, p99 time.Duration) Row {
	r := Row{Stats: Stats{Strategy: Strategy{Name: name}, Pings: 10_000, Transitions: 1000, Lost: lost}, HasTruth: true,
		Truth: 1000, Phantoms: phantoms, Missed: missed}
	// 100 latencies: the 50th and the 99th are the percentiles.
	for i := range 100 {
		switch {
		case i < 50:
			r.Latency = append(r.Latency, p50)
		case i < 99:
			r.Latency = append(r.Latency, p99)
		default:
			r.Latency = append(r.Latency, p99+time.Second)
		}
	}
	return r
}

// Every strategy of the result gets a bar per metric, in proportion to
// its figure, named as escaped text: a strategy added to the simulation
// (an adaptive hold, say) shows up without changing the chart.
func TestChartHasABarPerStrategyPerMetric(t *testing.T) {
	rows := []Row{
		chartRow("arrival", 300, 10, 0, 0, 0),
		chartRow("hold=500ms", 100, 20, 5, 500*time.Millisecond, 600*time.Millisecond),
		chartRow(`adaptive <p99> & "more"`, 50, 40, 10, 250*time.Millisecond, 1200*time.Millisecond),
	}
	var svg bytes.Buffer
	if err := WriteChart(&svg, "seed 1 & <all>", "", rows); err != nil {
		t.Fatal(err)
	}
	h := svgBars(t, svg.Bytes())
	metrics := []string{"phantom of emitted", "missed of true", "lost to late of pings", "p50", "p99"}
	if len(h) != len(rows)*len(metrics) {
		t.Fatalf("%d bars, want %d strategies × %d metrics: %v", len(h), len(rows), len(metrics), h)
	}
	for _, r := range rows {
		for _, m := range metrics {
			if _, ok := h[r.Name+"/"+m]; !ok {
				t.Errorf("no bar for %s / %s", r.Name, m)
			}
		}
	}
	ratio := func(a, b string, want float64) {
		t.Helper()
		if got := h[a] / h[b]; math.Abs(got/want-1) > 1e-4 {
			t.Errorf("%s ÷ %s drawn %v, want %v", a, b, got, want)
		}
	}
	ratio("arrival/phantom of emitted", "hold=500ms/phantom of emitted", 3)      // 30 % vs 10 %
	ratio(`adaptive <p99> & "more"/missed of true`, "arrival/missed of true", 4) // 4 % vs 1 %
	ratio(`adaptive <p99> & "more"/p99`, "hold=500ms/p99", 2)                    // 1.2 s vs 600 ms
	ratio("hold=500ms/p50", `adaptive <p99> & "more"/p50`, 2)
	if h["arrival/p50"] != 0 || h["arrival/lost to late of pings"] != 0 {
		t.Errorf("arrival order's zeros are drawn %v and %v tall", h["arrival/p50"], h["arrival/lost to late of pings"])
	}
	if bytes.Contains(svg.Bytes(), []byte("<p99>")) || bytes.Contains(svg.Bytes(), []byte("<all>")) {
		t.Error("a name is written unescaped")
	}
}
