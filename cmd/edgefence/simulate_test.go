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

func TestSimulatePrintsATableWithGroundTruth(t *testing.T) {
	var out bytes.Buffer
	if err := simulate(&out, smallSimulation(t)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"60 devices", "faults:", "phantom", "arrival", "hold=500ms"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// A simulated stream written as a capture replays to the same numbers:
// both go through the same engine, so every count must agree exactly.
func TestSimulatedCaptureReplaysToTheSameTransitions(t *testing.T) {
	o := smallSimulation(t)
	set, err := o.fleet.Fences(o.numFences)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(o.fencesOut, o.fleet.FencesGeoJSON(o.numFences), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := newStreamCapture(o.capture)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := fleet.Run(o.fleet, o.engine, set, o.holds, 2, c.write)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.close(); err != nil {
		t.Fatal(err)
	}
	rep, err := replay(&replayOptions{engine: o.engine, holds: durationList{0, 500 * time.Millisecond}, fences: o.fencesOut}, []string{o.capture})
	if err != nil {
		t.Fatal(err)
	}
	if rep.read.Records != sim.Pings {
		t.Fatalf("replay read %d records, the simulation sent %d pings", rep.read.Records, sim.Pings)
	}
	for i := range sim.Rows {
		s, r := &sim.Rows[i], &rep.rows[i]
		if s.Transitions != r.Transitions || s.Late != r.Late || s.Reversals != r.Reversals || s.Pings != r.Pings {
			t.Errorf("%s: simulated %d transitions, %d late, %d reversals of %d pings; replayed %d, %d, %d of %d",
				s.Name, s.Transitions, s.Late, s.Reversals, s.Pings, r.Transitions, r.Late, r.Reversals, r.Pings)
		}
	}
}
