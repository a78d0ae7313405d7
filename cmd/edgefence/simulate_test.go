package main

import (
	"bytes"
	"encoding/json"
	"io"
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
		holds:     shadow.List(shadow.Strategies([]time.Duration{0, 500 * time.Millisecond})),
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

// The real-world fleet is the default; --gps-noise off (or =false) gives
// the clean one, --gps-noise on (or =true) the default again.
func TestSimulateGPSNoiseFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--gps-noise", "off"}, false},
		{[]string{"--gps-noise=false"}, false},
		{[]string{"--gps-noise=true"}, true},
		{[]string{"--gps-noise", "on", "--devices", "5"}, true},
	} {
		o := &simulateOptions{fleet: fleet.DefaultConfig(), engine: engine.DefaultConfig()}
		if err := simulateFlags(o).Parse(tc.args); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if o.fleet.GPSNoise != tc.want {
			t.Errorf("%q: noise %v, want %v", tc.args, o.fleet.GPSNoise, tc.want)
		}
	}
	o := &simulateOptions{fleet: fleet.DefaultConfig()}
	fs := simulateFlags(o)
	fs.SetOutput(io.Discard)
	if err := fs.Parse([]string{"--gps-noise", "maybe"}); err == nil || !strings.Contains(err.Error(), "want on or off") {
		t.Fatalf("--gps-noise maybe: %v, want a clear error", err)
	}
}

// The table always has the observable scoring beside the raw one, and
// --json its fields beside the raw ones.
func TestSimulateReportsObservableBesideRaw(t *testing.T) {
	o := smallSimulation(t)
	o.capture, o.fencesOut = "", ""
	var out bytes.Buffer
	if err := simulate(&out, o); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nfixes: ", "devices parked at an edge", "\nscoring: ", "true transitions ambiguous", "phantom raw", "flip-flops"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
	o.json = true
	out.Reset()
	if err := simulate(&out, o); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Run        map[string]any   `json:"run"`
		Strategies []map[string]any `json:"strategies"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc.Run["ambiguous_transitions"]; !ok {
		t.Fatalf("run lacks ambiguous_transitions: %v", doc.Run)
	}
	for _, s := range doc.Strategies {
		for _, k := range []string{"phantoms", "missed", "phantom_rate", "observable_phantoms", "observable_missed", "parked_flip_flops"} {
			if _, ok := s[k]; !ok {
				t.Fatalf("strategy lacks %s: %v", k, s)
			}
		}
	}
}
