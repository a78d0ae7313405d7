package suite

import (
	"bytes"
	"encoding/xml"
	"math"
	"strconv"
	"testing"
	"time"
)

// The bench's chart has a bar per broker per scenario it ran, in each of
// its two panels, as tall as the median's share of the axis.
func TestChartOfTheTable(t *testing.T) {
	odd := `mosquitto <2.0> & "co"`
	rows := []*Row{
		rowOf("ceiling", "edgefence (engine on)", 80000, 10, 0),
		rowOf("ceiling", "edgefence --engine=off", 100000, 8, 0),
		rowOf("ceiling", odd, 40000, 5, 0),
		rowOf("paced", "edgefence (engine on)", 50000, 20, 450),
		rowOf("paced", odd, 50000, 10, 50),
	}
	rows[0].Runs = append(rows[0].Runs, rowOf("", "", 60000, 12, 0).Runs[0], rowOf("", "", 90000, 11, 0).Runs[0]) // median 80,000
	var svg bytes.Buffer
	if err := (&Suite{Runs: 3, BrokerCPU: "1"}).writeChart(&svg, rows, time.Minute); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(svg.Bytes(), []byte("<2.0>")) {
		t.Fatal("a broker's name is not escaped")
	}
	if !bytes.Contains(svg.Bytes(), []byte(">100,000<")) || !bytes.Contains(svg.Bytes(), []byte(">20.00<")) {
		t.Error("the bars' labels are not 100,000 pings/s and 20.00 µs")
	}
	var doc struct {
		Rects []struct {
			Class  string `xml:"class,attr"`
			Series string `xml:"data-series,attr"`
			Group  string `xml:"data-group,attr"`
			Value  string `xml:"data-value,attr"`
			Height string `xml:"height,attr"`
		} `xml:"g>rect"`
	}
	if err := xml.Unmarshal(svg.Bytes(), &doc); err != nil {
		t.Fatalf("not well-formed: %v", err)
	}
	height := map[string][]float64{} // series/group → heights, throughput panel first
	for _, r := range doc.Rects {
		if r.Class != "bar" {
			continue
		}
		h, err := strconv.ParseFloat(r.Height, 64)
		if err != nil {
			t.Fatal(err)
		}
		height[r.Series+"/"+r.Group] = append(height[r.Series+"/"+r.Group], h)
	}
	if len(height) != len(rows) {
		t.Fatalf("bars for %d broker/scenario pairs, want %d: %v", len(height), len(rows), height)
	}
	for k, hs := range height {
		if len(hs) != 2 {
			t.Errorf("%s: %d bars, want pings/s and CPU", k, len(hs))
		}
	}
	ratio := func(a, b string, panel int, want float64) {
		t.Helper()
		if got := height[a][panel] / height[b][panel]; math.Abs(got/want-1) > 1e-4 {
			t.Errorf("%s ÷ %s in panel %d drawn %v, want %v", a, b, panel, got, want)
		}
	}
	ratio("edgefence --engine=off/ceiling", odd+"/ceiling", 0, 2.5) // 100,000 vs 40,000 pings/s
	ratio("edgefence (engine on)/ceiling", odd+"/ceiling", 0, 2)    // the median of 3 runs
	ratio("edgefence (engine on)/paced", "edgefence --engine=off/ceiling", 1, 20.0/8)
	if _, ok := height["edgefence --engine=off/paced"]; ok {
		t.Error("a bar for a broker the scenario did not run")
	}
}
