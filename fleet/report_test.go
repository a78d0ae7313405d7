package fleet

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/shadow"
)

// The chart (simulate --chart) is an SVG titled with the fleet and seed,
// with every strategy's bars; the table is the fleet line, the faults line
// and the strategies.
func TestWriteChartAndTable(t *testing.T) {
	c := DefaultConfig()
	c.Devices, c.Duration = 60, 2*time.Minute
	set, err := c.Fences(100)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(c, engine.DefaultConfig(), set, shadow.Strategies([]time.Duration{0, 500 * time.Millisecond}), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := res.WriteTable(&out, &c, set.Len()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fleet: 60 devices × 2m0s, 100 fences, seed 1: ", "\nfaults: ", "hold=500ms"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("table lacks %q:\n%s", want, out.String())
		}
	}
	chart := filepath.Join(t.TempDir(), "sim.svg")
	if err := res.WriteChart(chart, &c, set.Len()); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name `xml:"svg"`
		Title   string   `xml:"title"`
		Rects   []struct {
			Class  string `xml:"class,attr"`
			Series string `xml:"data-series,attr"`
		} `xml:"g>rect"`
	}
	if err := xml.Unmarshal(svg, &doc); err != nil {
		t.Fatalf("not SVG: %v", err)
	}
	if !strings.Contains(doc.Title, "60 devices × 2m0s, 100 fences, seed 1") || thousands(72014676) != "72,014,676" || thousands(-1000) != "-1,000" {
		t.Fatalf("title %q", doc.Title)
	}
	per := map[string]int{}
	for _, r := range doc.Rects {
		if r.Class == "bar" {
			per[r.Series]++
		}
	}
	if len(per) != 2 || per["arrival"] != 5 || per["hold=500ms"] != 5 {
		t.Fatalf("bars per strategy: %v", per)
	}
}
