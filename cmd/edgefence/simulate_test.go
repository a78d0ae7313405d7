package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/fleet"
	"github.com/edgefence/edgefence/shadow"
)

func smallSimulation(t *testing.T) *simulateOptions {
	t.Helper()
	dir := t.TempDir()
	f := fleet.DefaultConfig()
	f.Devices, f.Duration = 60, 2*time.Minute
	return &simulateOptions{
		fleet: f, engine: engine.DefaultConfig(), numFences: 100, workers: 2,
		holds:     strategyList(shadow.Strategies([]time.Duration{0, 500 * time.Millisecond})),
		capture:   filepath.Join(dir, "sim.jsonl"),
		fencesOut: filepath.Join(dir, "fences.geojson"),
	}
}

// simulate prints the table and, with --capture, --write-fences and
// --chart, writes the stream, the fences and the chart (package fleet and
// replay check what is in them).
func TestSimulatePrintsATableWithGroundTruth(t *testing.T) {
	o := smallSimulation(t)
	o.chart = filepath.Join(t.TempDir(), "sim.svg")
	var out bytes.Buffer
	if err := simulate(&out, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"60 devices", "faults:", "phantom", "arrival", "hold=500ms"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	for _, f := range []struct{ path, start string }{{o.capture, `{"seq":1,`}, {o.fencesOut, "{"}, {o.chart, "<?xml"}} {
		b, err := os.ReadFile(f.path)
		if err != nil || !bytes.HasPrefix(b, []byte(f.start)) {
			t.Errorf("%s: %.20q, %v; want it to start %q", f.path, b, err, f.start)
		}
	}
}
