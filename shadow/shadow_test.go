package shadow

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/payload"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func ping(c clock.Clamper, dev string, lat float64, event, arrive time.Duration) engine.Ping {
	pos := payload.Position{Lat: lat, Lon: 13.05, TsNs: t0.Add(event).UnixNano(), HasTs: true}
	return engine.NewPing(c, dev, &pos, t0.Add(arrive))
}

// One device's reordered stream through arrival order and a 500 ms hold:
// the runner reports the phantom pair only under arrival order, and the
// held strategy's added latency is exactly the hold.
func TestRunnerComparesStrategiesOnOneStream(t *testing.T) {
	set, err := fence.Parse([]byte(`{"type":"FeatureCollection","features":[
	 {"type":"Feature","id":"a","geometry":{"type":"Polygon","coordinates":[[[13.0,52.0],[13.1,52.0],[13.1,52.1],[13.0,52.1],[13.0,52.0]]]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg := engine.DefaultConfig()
	// The fixtures jump kilometres in a second, which the speed gate (on by
	// default) sets aside; the gate has tests of its own.
	cfg.MaxSpeed = 0
	r, err := NewRunner(cfg, set, Strategies([]time.Duration{0, 500 * time.Millisecond}), t0)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Clamper()
	in, out := 52.05, 52.2
	arrivals := []engine.Ping{
		ping(c, "d", in, 0, 0),
		ping(c, "d", out, 1100*time.Millisecond, 1150*time.Millisecond),
		ping(c, "d", in, 1000*time.Millisecond, 1300*time.Millisecond),
	}
	got := r.Device(arrivals)
	if len(got[0]) != 3 || len(got[1]) != 2 {
		t.Fatalf("arrival order emitted %d, hold %d; want 3 (with a phantom ENTER) and 2", len(got[0]), len(got[1]))
	}
	st := r.Stats()
	rows := []Row{{Stats: st[0]}, {Stats: st[1]}}
	if rows[0].Reversals != 2 || rows[1].Reversals != 0 || rows[1].Percentile(50) != 500*time.Millisecond {
		t.Fatalf("stats: %+v / %+v", rows[0].Stats, rows[1].Stats)
	}
	var tb bytes.Buffer
	if err := WriteTable(&tb, rows); err != nil || !strings.Contains(tb.String(), "hold=500ms") || !strings.Contains(tb.String(), "∞×") {
		t.Fatalf("table:\n%s (%v)", tb.String(), err)
	}
	var jb bytes.Buffer
	if err := WriteJSON(&jb, map[string]int{"devices": 1}, rows); err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Strategies []struct {
			Strategy   string  `json:"strategy"`
			Reversals  int64   `json:"reversals"`
			AddedP50Ms float64 `json:"added_latency_p50_ms"`
		} `json:"strategies"`
	}
	if err := json.Unmarshal(jb.Bytes(), &parsed); err != nil || len(parsed.Strategies) != 2 || parsed.Strategies[1].AddedP50Ms != 500 {
		t.Fatalf("json: %s (%v)", jb.String(), err)
	}
}

// Strategies are read as holds, "adaptive", each optionally "-noacc".
func TestParseStrategy(t *testing.T) {
	for in, want := range map[string]Strategy{
		"0":              {Name: "arrival"},
		"500ms":          {Name: "hold=500ms", Hold: 500 * time.Millisecond},
		"adaptive":       {Name: "adaptive", Adaptive: true},
		"adaptive-noacc": {Name: "adaptive-noacc", Adaptive: true, NoAccuracy: true},
		" 2s-noacc":      {Name: "hold=2s-noacc", Hold: 2 * time.Second, NoAccuracy: true},
	} {
		got, err := ParseStrategy(in)
		if err != nil || got != want {
			t.Errorf("ParseStrategy(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	if _, err := ParseStrategy("soon"); err == nil {
		t.Error(`ParseStrategy("soon") succeeded`)
	}
}
