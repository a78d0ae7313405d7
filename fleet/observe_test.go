package fleet

import (
	"math"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
)

// A square fence of 0.01° a side (about 1.1 km north-south); points are
// placed by their signed distance from its west edge (positive inside).
var square = []byte(`{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"a","geometry":{"type":"Polygon","coordinates":[[[13.0,52.0],[13.01,52.0],[13.01,52.01],[13.0,52.01],[13.0,52.0]]]}}]}`)

func squareSet(t *testing.T) *fence.Set {
	t.Helper()
	set, err := fence.Parse(square)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// track returns true samples period apart, at the signed distances ds
// (metres, inside positive) from the square's west edge, half-way up.
func track(period time.Duration, ds ...float64) []sample {
	const lat = 52.005
	kx := mPerDegLat * math.Cos(lat*math.Pi/180)
	s := make([]sample, len(ds))
	for i, d := range ds {
		s[i] = sample{at: int64(i) * int64(period), lat: lat, lon: 13.0 + d/kx}
	}
	return s
}

func truthOf(t *testing.T, set *fence.Set, s []sample, dev device) truthRun {
	t.Helper()
	var tr truthRun
	tr.run(s, set, fence.NewSearcher(), 0, ruleFor(&dev))
	return tr
}

// The rule: a stay is observable when the true track is at least 2 σ
// inside for 3 fixes, or for 3 s of fixes when that is more.
func TestObservableStayIsTwoSigmaInsideForThreeFixesOrThreeSeconds(t *testing.T) {
	set := squareSet(t)
	const sigma = 5 // so 2 σ is 10 m
	for _, tc := range []struct {
		name   string
		period time.Duration
		ds     []float64
		hidden bool
	}{
		{"3 fixes 2σ inside at 1 Hz", time.Second, []float64{-50, 11, 12, 11, -50}, false},
		{"only grazes the fence", time.Second, []float64{-50, 3, 5, 6, 5, 3, -50}, true},
		{"2σ inside for 2 fixes only", time.Second, []float64{-50, 5, 12, 12, 5, -50}, true},
		{"3 fixes deep but not in a row", time.Second, []float64{-50, 12, 12, 5, 12, -50}, true},
		{"3 fixes at 5 Hz are 0.6 s: not enough", 200 * time.Millisecond, []float64{-50, 12, 12, 12, -50}, true},
		{"3 s of fixes at 5 Hz", 200 * time.Millisecond, append(append([]float64{-50}, repeat(12, 15)...), -50), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := truthOf(t, set, track(tc.period, tc.ds...), device{period: int64(tc.period), sigma: sigma})
			if len(tr.events) != 2 {
				t.Fatalf("truth %v, want an ENTER and an EXIT", tr.events)
			}
			for _, e := range tr.events {
				if e.hidden != tc.hidden {
					t.Fatalf("%v: hidden %v, want %v", e, e.hidden, tc.hidden)
				}
			}
			if got := len(tr.hidden); got != map[bool]int{false: 0, true: 1}[tc.hidden] {
				t.Fatalf("%d hidden windows", got)
			}
		})
	}
}

func repeat(d float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = d
	}
	return s
}

// judgeOf aligns emitted with the truth of s and judges it, as Run does.
func judgeOf(t *testing.T, s []sample, dev device, emitted ...event) verdict {
	t.Helper()
	set := squareSet(t)
	tr := truthOf(t, set, s, dev)
	truth := append([]event(nil), tr.events...)
	const early, late = 5 * sec, 900 * sec
	align(truth, emitted, early, late, nil)
	return ruleFor(&dev).judge(truth, emitted, tr.hidden, s, &dev, set, early)
}

// A pass outside that comes within 2 σ of the edge is ambiguous: a
// phantom ENTER/EXIT pair there is excused. Farther out, it is a phantom.
func TestAPassWithinTwoSigmaOutsideIsAmbiguous(t *testing.T) {
	dev := device{period: int64(time.Second), sigma: 5}
	E, X := engine.Enter, engine.Exit
	near := track(time.Second, -60, -30, -8, -6, -8, -30, -60)
	if v := judgeOf(t, near, dev, ev("a", E, 3), ev("a", X, 5)); v.phantoms != 0 || v.excused != 2 {
		t.Errorf("pass 6 m outside (2σ = 10 m): %+v, want the pair excused", v)
	}
	// The EXIT closing an excused ENTER is excused however late it comes.
	if v := judgeOf(t, near, dev, ev("a", E, 3), ev("a", X, 30)); v.phantoms != 0 || v.excused != 2 {
		t.Errorf("pass 6 m outside, late EXIT: %+v, want the pair excused", v)
	}
	far := track(time.Second, -60, -30, -25, -20, -25, -30, -60)
	if v := judgeOf(t, far, dev, ev("a", E, 3), ev("a", X, 5)); v.phantoms != 2 || v.excused != 0 {
		t.Errorf("pass 20 m outside: %+v, want two phantoms", v)
	}
	// Near the edge just after a true crossing is not a pass: a flicker at
	// an observable EXIT is a phantom pair.
	cross := track(time.Second, 30, 30, 30, 30, -3, -5, -8, -40, -60)
	v := judgeOf(t, cross, dev, ev("a", E, 0), ev("a", X, 4), ev("a", E, 5), ev("a", X, 6))
	if v.phantoms != 2 || v.missed != 0 {
		t.Errorf("flicker after a crossing: %+v, want two phantoms", v)
	}
	// A stay the fixes cannot show: neither its missing transitions nor
	// the phantoms around it count.
	graze := track(time.Second, -60, -20, 2, 4, 2, -20, -60)
	v = judgeOf(t, graze, dev, ev("a", E, 1), ev("a", X, 1.5), ev("a", E, 2), ev("a", X, 6))
	if v.phantoms != 0 || v.missed != 0 {
		t.Errorf("grazing stay: %+v, want nothing counted", v)
	}
	// …also when the run ends during it.
	open := track(time.Second, -60, -20, 2, 4, 2, 3)
	if v := judgeOf(t, open, dev, ev("a", E, 3), ev("a", X, 4), ev("a", E, 5)); v.phantoms != 0 || v.missed != 0 {
		t.Errorf("grazing stay open at the end: %+v, want nothing counted", v)
	}
	// An observable stay missed is missed.
	deep := track(time.Second, -60, 20, 40, 40, 20, -60)
	if v := judgeOf(t, deep, dev); v.missed != 2 {
		t.Errorf("deep stay not emitted: %+v, want two missed", v)
	}
}

// A parked device's unmatched ENTER/EXIT pairs while it stood are its
// flip-flops, scored apart from the observable phantoms.
func TestParkedFlipFlopsAreCounted(t *testing.T) {
	dev := device{period: int64(time.Second), sigma: 5, park: &parking{from: 2 * sec, to: 60 * sec}}
	E, X := engine.Enter, engine.Exit
	s := track(time.Second, append([]float64{-80, -40}, repeat(-4, 60)...)...)
	v := judgeOf(t, s, dev, ev("a", E, 10), ev("a", X, 12), ev("a", E, 30), ev("a", X, 31), ev("a", E, 50))
	if v.parked != 5 || v.flips != 3 || v.phantoms != 0 || v.excused != 0 {
		t.Fatalf("%+v: want 5 parked phantoms, 3 flip-flops (an odd one counts), no other", v)
	}
	// After the device left, the same is a phantom again.
	if v := judgeOf(t, s, dev, ev("a", E, 61)); v.parked != 0 || v.phantoms+v.excused != 1 {
		t.Fatalf("%+v: want it judged as any other", v)
	}
}
