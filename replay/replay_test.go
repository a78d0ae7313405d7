package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/fleet"
	"github.com/edgefence/edgefence/shadow"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// bundledFences is the repository's example fence file.
const bundledFences = "../fences.geojson"

func TestRunRejectsBadHolds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capture.jsonl")
	line := `{"seq":1,"device":"d","lat":1,"lon":1,"event":1796083200000000000,"ingest":1796083200000000000}` + "\n"
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, holds := range [][]time.Duration{nil, {0, 0}, {time.Hour}} {
		o := DefaultOptions()
		o.Holds, o.Fences = holds, bundledFences
		if _, err := Run(o, []string{path}); err == nil || !strings.Contains(err.Error(), "hold") {
			t.Errorf("holds %v: %v, want an error about the hold", holds, err)
		}
	}
}

// A simulated stream written as a capture replays to the same numbers:
// both go through the same engine, so every count must agree exactly.
func TestSimulatedCaptureReplaysToTheSameTransitions(t *testing.T) {
	dir := t.TempDir()
	f := fleet.DefaultConfig()
	f.Devices, f.Duration = 60, 2*time.Minute
	engine := engine.DefaultConfig()
	holds := []time.Duration{0, 500 * time.Millisecond}
	set, err := f.Fences(100)
	if err != nil {
		t.Fatal(err)
	}
	fences, path := filepath.Join(dir, "fences.geojson"), filepath.Join(dir, "sim.jsonl")
	if err := os.WriteFile(fences, f.FencesGeoJSON(100), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := capture.CreatePingWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := fleet.Run(f, engine, set, shadow.Strategies(holds), 2, c.WritePings)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(Options{Engine: engine, Holds: holds, Fences: fences}, []string{path})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Read.Records != sim.Pings {
		t.Fatalf("replay read %d records, the simulation sent %d pings", rep.Read.Records, sim.Pings)
	}
	for i := range sim.Rows {
		s, r := &sim.Rows[i], &rep.Rows[i]
		if s.Transitions != r.Transitions || s.Late != r.Late || s.Reversals != r.Reversals || s.Pings != r.Pings {
			t.Errorf("%s: simulated %d transitions, %d late, %d reversals of %d pings; replayed %d, %d, %d of %d",
				s.Name, s.Transitions, s.Late, s.Reversals, s.Pings, r.Transitions, r.Late, r.Reversals, r.Pings)
		}
	}
}
