package evaluator

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"pgregory.net/rapid"
)

// gated switches the speed gate on at its default (and DWELL off).
func gated(c *engine.Config) { c.MaxSpeed, c.Dwell = engine.DefaultMaxSpeed, 0 }

// drive returns the fixes of a device driving east at speed (m/s) along
// the depot's middle from 200 m west of it, one every gaps[i], each
// arriving delays[i] after it was fixed, with accuracy 5 m.
func drive(speed float64, gaps, delays []time.Duration) []fix {
	const mPerDegLon = 111_320.0 * 0.6088 // cos 52.505°
	var out []fix
	ev := time.Duration(0)
	for i, g := range gaps {
		ev += g
		p := pos{52.505, 13.397 + speed*ev.Seconds()/mPerDegLon}
		out = append(out, fix{p, 5, ev, ev + delays[i]})
	}
	return out
}

// An outlier fix among good ones (100–500 m off, reported with an
// ordinary accuracy) changes no transition: the speed gate sets it aside,
// delivered on time or late (issue 32).
func TestPropertyOutlierAmongGoodFixesChangesNoTransition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(3, 60).Draw(t, "pings")
		gaps, delays := make([]time.Duration, n), make([]time.Duration, n)
		for i := range n {
			gaps[i] = ms(rapid.IntRange(200, 1500).Draw(t, "gap_ms"))
			// Within the hold: a stream whose good fixes come seconds late
			// makes the clock model clamp an on-time stamp as ahead, and
			// the gate does not judge a clamped fix (TestSpeedGateFollows…).
			delays[i] = ms(rapid.SampledFrom([]int{0, 100, 300}).Draw(t, "delay_ms"))
		}
		good := drive(rapid.Float64Range(5, 30).Draw(t, "speed"), gaps, delays)
		// The outlier is fixed between two good fixes (after the first).
		k := rapid.IntRange(1, n-1).Draw(t, "outlier_after")
		d := rapid.Float64Range(200, 500).Draw(t, "outlier_m")
		a := rapid.Float64Range(0, 2*math.Pi).Draw(t, "outlier_dir")
		at := (good[k-1].event + good[k].event) / 2
		o := fix{pos{good[k-1].p.lat + d*math.Sin(a)/111_320, good[k-1].p.lon + d*math.Cos(a)/(111_320*0.6088)}, 5, at, at + ms(rapid.SampledFrom([]int{0, 100, 2500}).Draw(t, "outlier_delay_ms"))}
		with := append(append(append([]fix(nil), good[:k]...), o), good[k:]...)

		want := newHarness(t, gated)
		want.sendInArrivalOrder("d", good)
		want.at(good[n-1].arrive + time.Hour)
		h := newHarness(t, gated)
		h.sendInArrivalOrder("d", with)
		h.at(good[n-1].arrive + time.Hour)
		if got, w := timeline(h.rec.trans), timeline(want.rec.trans); fmt.Sprint(got) != fmt.Sprint(w) {
			t.Fatalf("an outlier %.0f m off at %v changed the transitions:\n got  %q\n want %q", d, at, got, w)
		}
		if g := h.m.Gated.Get() - want.m.Gated.Get(); g != 1 {
			t.Fatalf("gated %d more fixes with the outlier, want 1", g)
		}
	})
}

// A device that really jumped (its first fixes after a cold boot or an
// outage far from the last) is followed once the next fix agrees; one
// whose jump its elapsed time explains, or whose stamp was clamped, at
// once.
func TestSpeedGateFollowsADeviceThatReallyJumped(t *testing.T) {
	for _, tc := range []struct {
		name  string
		jump  time.Duration // when the first fix in the depot was fixed
		stamp func(event time.Duration) int64
		want  []string
		gated uint64
	}{
		// 1.7 km in a second: set aside, followed at the fix that agrees.
		{"impossible", 2 * time.Second, nil, []string{"d depot ENTER +3s"}, 1},
		// 1.7 km in a minute is 28 m/s: a vehicle can.
		{"after an outage", time.Minute, nil, []string{"d depot ENTER +1m0s"}, 0},
		// A cold boot's stamps are not the device's time: not judged.
		{"cold boot", 2 * time.Second, func(event time.Duration) int64 { return event.Nanoseconds() }, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, gated)
			h.send("d", outside, 0, 0)
			h.send("d", outside, time.Second, time.Second)
			for i := range 3 {
				ev := tc.jump + time.Duration(i)*time.Second
				if tc.stamp != nil {
					h.sendStamp("d", inDepot, tc.stamp(ev), true, ev)
				} else {
					h.send("d", inDepot, ev, ev)
				}
			}
			h.at(tc.jump + time.Hour)
			got := h.rec.lines()
			if tc.want == nil { // the cold boot's stamps: only that it entered
				if len(got) != 1 || got[0][:14] != "d depot ENTER " {
					t.Fatalf("transitions %q, want one ENTER into depot", got)
				}
			} else if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("transitions:\n got  %q\n want %q", got, tc.want)
			}
			if g := h.m.Gated.Get(); g != tc.gated {
				t.Fatalf("gated %d fixes, want %d", g, tc.gated)
			}
		})
	}
}

// A late outlier is placed into the history and judged there against
// the fixes before it, as it would have been live: set aside, counted,
// no historic transition.
func TestSpeedGateJudgesALateFixAsLive(t *testing.T) {
	fixes := []fix{
		{inDepot, 5, 0, 0},
		{pos{52.505, 13.4022}, 5, time.Second, time.Second},
		{inYard, 5, 2 * time.Second, 2 * time.Second}, // 1.1 km in a second
		{pos{52.505, 13.4024}, 5, 3 * time.Second, 3 * time.Second},
		{pos{52.505, 13.4026}, 5, 4 * time.Second, 4 * time.Second},
	}
	for _, late := range []bool{false, true} {
		h := newHarness(t, gated)
		f := append([]fix(nil), fixes...)
		if late {
			f[2].arrive = 10 * time.Second // after the fixes since: reconciled
		}
		h.sendInArrivalOrder("d", f)
		h.at(time.Hour)
		h.want("d depot ENTER +0s")
		if g := h.m.Gated.Get(); g != 1 {
			t.Fatalf("late %v: gated %d fixes, want 1", late, g)
		}
		if late && h.m.Reconciled.Get() != 1 {
			t.Fatalf("reconciled %d late fixes, want 1", h.m.Reconciled.Get())
		}
	}
}
