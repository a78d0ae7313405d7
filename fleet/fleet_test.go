package fleet

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/shadow"
)

func TestTruthFollowsTruePositions(t *testing.T) {
	set, err := fence.Parse([]byte(`{"type":"FeatureCollection","features":[
	 {"type":"Feature","id":"a","properties":{"dwell":10},"geometry":{"type":"Polygon","coordinates":[[[13.0,52.0],[13.1,52.0],[13.1,52.1],[13.0,52.1],[13.0,52.0]]]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	in, out := [2]float64{52.05, 13.05}, [2]float64{52.2, 13.05}
	var s []sample
	for i, p := range [][2]float64{out, in, in, in, out} {
		s = append(s, sample{at: int64(i) * 6 * sec, lat: p[0], lon: p[1]})
	}
	got := trueEvents(s, set, 0)
	want := fmt.Sprint([]event{{fence: "a", typ: engine.Enter, at: 6 * sec}, {fence: "a", typ: engine.Dwell, at: 16 * sec}, {fence: "a", typ: engine.Exit, at: 24 * sec}})
	if fmt.Sprint(got) != want {
		t.Fatalf("truth = %v, want %v", got, want)
	}
}

func shortRun(t *testing.T, workers int, mod func(*Config, *engine.Config)) *Result {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Devices = 300
	cfg.Duration = 3 * time.Minute
	eng := engine.DefaultConfig()
	if mod != nil {
		mod(&cfg, &eng)
	}
	set, err := cfg.Fences(300)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(cfg, eng, set, shadow.Strategies([]time.Duration{0, 500 * time.Millisecond}), workers, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The product's claim, on the clean fleet (exact fixes: ordering alone)
// with the engine's skew tolerance above the model's clock error: arrival
// order invents transitions, a 500 ms hold removes nearly all of them.
func TestHoldCutsPhantomsOnTheCleanModel(t *testing.T) {
	res := shortRun(t, 2, func(c *Config, e *engine.Config) { c.GPSNoise, e.Skew = false, 5*time.Second })
	arrival, held := &res.Rows[0], &res.Rows[1]
	if arrival.Phantoms == 0 {
		t.Fatal("arrival order produced no phantoms: the model injects no reordering")
	}
	if held.Phantoms*20 > arrival.Phantoms {
		t.Fatalf("500 ms hold: %d phantoms (%.3f%%) vs arrival order %d (%.3f%%): less than 20× fewer",
			held.Phantoms, 100*held.PhantomRate(), arrival.Phantoms, 100*arrival.PhantomRate())
	}
	t.Logf("phantoms: arrival %d (%.2f%%), 500ms %d (%.3f%%) of %d/%d emitted; late %.2f%%",
		arrival.Phantoms, 100*arrival.PhantomRate(), held.Phantoms, 100*held.PhantomRate(),
		arrival.Transitions, held.Transitions, 100*shadow.Rate(held.Late, held.Pings))
}

// With no faults at all there is nothing to get wrong, and the buffer
// adds exactly the hold.
func TestNoFaultsNoPhantomsAndExactlyTheHold(t *testing.T) {
	res := shortRun(t, 1, func(c *Config, _ *engine.Config) {
		c.ClockOffset, c.DelayMedian, c.HandoverPerH, c.ColdBootPerH, c.OutagePerH = 0, 0, 0, 0, 0
		c.GPSNoise = false
	})
	for _, r := range res.Rows {
		if r.Phantoms != 0 || r.Missed != 0 || r.Late != 0 {
			t.Errorf("%s: %d phantoms, %d missed, %d late; want none", r.Name, r.Phantoms, r.Missed, r.Late)
		}
		if p50, max := r.Percentile(50), r.Percentile(100); p50 != r.Hold || max != r.Hold {
			t.Errorf("%s: added latency p50 %v max %v, want exactly the hold", r.Name, p50, max)
		}
	}
}

// The same seed gives the same numbers however devices are spread over
// workers: each device has its own random streams. The observable score
// and the parked devices' flip-flops too.
func TestDeterministicAcrossWorkers(t *testing.T) {
	a, b := shortRun(t, 1, nil), shortRun(t, 3, nil)
	for i := range a.Rows {
		x, y := a.Rows[i], b.Rows[i]
		if x.Transitions != y.Transitions || x.Phantoms != y.Phantoms || x.Missed != y.Missed || x.Late != y.Late || x.Reversals != y.Reversals {
			t.Fatalf("%s: 1 worker %+v, 3 workers %+v", x.Name, x.Stats, y.Stats)
		}
		if a.Observable[i] != b.Observable[i] {
			t.Fatalf("%s: observable %+v with 1 worker, %+v with 3", x.Name, a.Observable[i], b.Observable[i])
		}
	}
	if a.Pings != b.Pings || a.Faults != b.Faults || a.Ambiguous != b.Ambiguous || a.Faults.Parked == 0 {
		t.Fatalf("stream differs: %d/%+v vs %d/%+v", a.Pings, a.Faults, b.Pings, b.Faults)
	}
}

func TestMonotonicKeepsWallTime(t *testing.T) {
	w := time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)
	m := Monotonic(w)
	if !m.Equal(w) || m.UnixNano() != w.UnixNano() || m.String() == w.String() {
		t.Fatalf("Monotonic(%v) = %v: want the same wall time with a monotonic reading", w, m)
	}
	if d := m.Add(90 * time.Second).Sub(m); d != 90*time.Second {
		t.Fatalf("difference = %v", d)
	}
}

// The adaptive hold on the default model: far less waiting than the
// fixed 500 ms hold, no more lost to lateness. With GPS noise, accuracy
// hysteresis cuts the phantoms that noise at fence edges makes.
func TestAdaptiveHoldAndAccuracyHysteresis(t *testing.T) {
	run := func(noise bool, strategies ...string) []shadow.Row {
		cfg := DefaultConfig()
		cfg.Devices, cfg.Duration, cfg.GPSNoise = 300, 3*time.Minute, noise
		set, err := cfg.Fences(300)
		if err != nil {
			t.Fatal(err)
		}
		var st []shadow.Strategy
		for _, s := range strategies {
			x, err := shadow.ParseStrategy(s)
			if err != nil {
				t.Fatal(err)
			}
			st = append(st, x)
		}
		res, err := Run(cfg, engine.DefaultConfig(), set, st, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Rows
	}
	rows := run(false, "500ms", "adaptive")
	fixed, adaptive := &rows[0], &rows[1]
	if adaptive.Mean() > fixed.Mean()/2 || adaptive.Lost > fixed.Lost {
		t.Errorf("adaptive: mean added %v, %d lost; fixed 500 ms: %v, %d lost", adaptive.Mean(), adaptive.Lost, fixed.Mean(), fixed.Lost)
	}
	rows = run(true, "adaptive", "adaptive-noacc")
	on, off := &rows[0], &rows[1]
	if on.Phantoms*2 > off.Phantoms {
		t.Errorf("with GPS noise: %d phantoms with hysteresis, %d without: want at most half", on.Phantoms, off.Phantoms)
	}
	t.Logf("mean added %v vs %v; noise phantoms %.3f%% with hysteresis, %.3f%% without",
		adaptive.Mean(), fixed.Mean(), 100*on.PhantomRate(), 100*off.PhantomRate())
}
