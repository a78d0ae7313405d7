package main

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// simulate --chart writes the run as an SVG titled with its fleet and
// seed, with every strategy's bars, and prints the same table.
func TestSimulateWritesAChart(t *testing.T) {
	o := smallSimulation(t)
	o.capture = ""
	o.chart = filepath.Join(t.TempDir(), "sim.svg")
	var out bytes.Buffer
	if err := simulate(&out, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "hold=500ms") {
		t.Fatalf("no table:\n%s", out.String())
	}
	svg, err := os.ReadFile(o.chart)
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
