package evaluator

import (
	"cmp"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"pgregory.net/rapid"
)

// stamped is a ping of a device whose clock differs from the server's:
// at is the true instant (an offset from t0), stamp the device's reading
// then, arrive when the server got it.
type stamped struct {
	p                 pos
	at, stamp, arrive time.Duration
	glitch            int64 // a stamp to send instead (Unix ns), when not 0
}

// walk generates one device moving among the test fences, a ping every
// 200 ms to 1.5 s of true time (tracker rates), without delay. No two
// fixes are at exactly the same place (each is a centimetre on from the
// one before), as no two real fixes are: a ping with a recent one's stamp
// and position is a redelivered copy (clock.md, "Redelivered copies"),
// which a clock stepping back by a multiple of the gaps would otherwise
// make of a standing device's pings.
func walk(t *rapid.T, minGap time.Duration, n int) []stamped {
	var out []stamped
	at := time.Duration(0)
	for i := range n {
		at += ms(rapid.IntRange(int(minGap/time.Millisecond), 1500).Draw(t, "gap_ms"))
		p := points[rapid.IntRange(0, len(points)-1).Draw(t, "point")]
		p.lat += float64(i) / 1e7
		out = append(out, stamped{p: p, at: at, stamp: at, arrive: at})
	}
	return out
}

// truthOf is what the engine commits for a walk delivered at once, in
// order, by a device whose clock is the server's.
func truthOf(t tb, w []stamped) []engine.Transition {
	h := newHarness(t, nil)
	for _, x := range w {
		h.send("dev", x.p, x.at, x.at)
	}
	h.at(time.Hour)
	h.proc.Flush(t0.Add(time.Hour))
	return h.rec.trans
}

// timelines renders the truth and what the engine decided as kinds,
// without the DWELLs that either decided on its timer (withoutTimerDwells).
func timelines(truth, got []engine.Transition) (want, have []string) {
	truth, got = withoutTimerDwells(truth, got)
	return kinds(truth), kinds(got)
}

// kinds renders transitions in event order as "fence TYPE", without
// their times: a device's timeline may be its own clock's. Those at one
// instant come as one ping orders them (DWELLs, EXITs, ENTERs, each by
// fence), not as they were published: a DWELL held for a late ping that
// might show the device left is published, historic, after the EXITs and
// ENTERs of the ping at its instant when that late ping turns out to come
// after it (TestDwellHeldForAStepComesAtItsInstant).
func kinds(trans []engine.Transition) []string {
	trans = slices.Clone(trans)
	rank := func(t engine.Type) int {
		return map[engine.Type]int{engine.Dwell: 0, engine.Exit: 1, engine.Enter: 2}[t]
	}
	slices.SortStableFunc(trans, func(a, b engine.Transition) int {
		return cmp.Or(cmp.Compare(a.Event, b.Event), cmp.Compare(rank(a.Type), rank(b.Type)), cmp.Compare(a.Fence, b.Fence))
	})
	out := make([]string, 0, len(trans))
	for _, tr := range trans {
		out = append(out, tr.Fence+" "+tr.Type.String())
	}
	return out
}

// run delivers w in arrival order and returns the harness after a flush.
func run(t tb, w []stamped, mod func(*engine.Config)) *harness {
	h := newHarness(t, mod)
	w = slices.Clone(w)
	slices.SortStableFunc(w, func(a, b stamped) int { return cmp.Compare(a.arrive, b.arrive) })
	for _, x := range w {
		stamp := t0.Add(x.stamp).UnixNano()
		if x.glitch != 0 {
			stamp = x.glitch
		}
		h.sendStamp("dev", x.p, stamp, true, x.arrive)
	}
	h.at(w[len(w)-1].arrive + time.Hour)
	h.proc.Flush(t0.Add(w[len(w)-1].arrive + time.Hour))
	return h
}

// A device whose clock is off by any constant up to the largest clock
// offset, with transport delays below the hold, gets the transitions of
// its true timeline, each stamped with its own clock's reading.
func TestPropertyConstantClockOffsetChangesNoTransition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := walk(t, time.Millisecond, rapid.IntRange(1, 40).Draw(t, "pings"))
		truth := truthOf(t, w)
		max := int64(engine.DefaultMaxClockOffset / time.Millisecond)
		off := ms(int(rapid.Int64Range(-max, max).Draw(t, "offset_ms")))
		for i := range w {
			w[i].stamp += off
			w[i].arrive += ms(rapid.IntRange(0, int(engine.DefaultHold/time.Millisecond)-1).Draw(t, "delay_ms"))
		}
		h := run(t, w, nil)
		if want, got := timelines(truth, h.rec.trans); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("clock %v off:\n got  %v\n want %v", off, got, want)
		}
		for _, tr := range h.rec.trans {
			if tr.Historic || tr.Clamp != clock.ClampNone {
				t.Fatalf("%s: historic %v, clamp %q", line(&tr), tr.Historic, tr.Clamp)
			}
		}
		if len(h.rec.late) != 0 {
			t.Fatalf("%d pings late", len(h.rec.late))
		}
	})
}

// One glitch among such pings, a stamp years ahead or at epoch zero, is
// clamped to the device's clock and changes no transition: sent with the
// same position as the ping it follows, it moves neither the model nor
// the watermark.
func TestPropertyOneGlitchChangesNoTransition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := walk(t, time.Millisecond, rapid.IntRange(1, 40).Draw(t, "pings"))
		truth := truthOf(t, w)
		off := ms(rapid.IntRange(-3000, 3000).Draw(t, "offset_ms"))
		for i := range w {
			w[i].stamp += off
		}
		i := rapid.IntRange(0, len(w)-1).Draw(t, "glitch_after")
		g := w[i]
		g.glitch = rapid.SampledFrom([]int64{0, time.Date(2031, 5, 1, 0, 0, 0, 0, time.UTC).UnixNano()}).Draw(t, "glitch")
		w = slices.Insert(w, i+1, g)
		h := run(t, w, nil)
		if want, got := timelines(truth, h.rec.trans); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("with a glitch after ping %d:\n got  %v\n want %v", i, got, want)
		}
		if len(h.rec.late) != 0 {
			t.Fatalf("%d pings late", len(h.rec.late))
		}
	})
}

// A clock step back by a second or more, or forward by more than the
// model's noise, invents no transition: the device's timeline stays
// continuous across it, or, for a step forward that the offset absorbs
// (within the skew tolerance), a stay's dwell leaves the gap it leaves
// out. (A step back within the hold is indistinguishable from transport
// delay and is ordered as such; one back by less than a second can lose
// a DWELL that came due while its pings were held; one forward within the
// model's noise lengthens a dwell under way by as much: docs/clock.md.)
func TestPropertyClockStepInventsNoTransition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Eight pings at least after the step: a step under a second is
		// confirmed by six.
		w := walk(t, 200*time.Millisecond, rapid.IntRange(14, 40).Draw(t, "pings"))
		truth := truthOf(t, w)
		// After the model has learned the clock (learnPings and one).
		at := rapid.IntRange(clock.LearnPings+1, len(w)-8).Draw(t, "step_at")
		step := ms(rapid.IntRange(300, 3000).Draw(t, "forward_ms"))
		if rapid.Bool().Draw(t, "backward") {
			step = -ms(rapid.IntRange(1000, 3000).Draw(t, "backward_ms"))
		}
		for i := at; i < len(w); i++ {
			w[i].stamp += step
		}
		h := run(t, w, nil)
		if want, got := timelines(truth, h.rec.trans); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("clock stepped %v at ping %d:\n got  %v\n want %v", step, at, got, want)
		}
		if len(h.rec.late) != 0 {
			t.Fatalf("%d pings late", len(h.rec.late))
		}
	})
}

// A store-and-forward backlog flushed newest-first after an outage is
// reconciled whole: the transitions it reveals are exactly those of the
// device's true timeline, and those inside the outage are historic. (The
// device is outside every fence at both ends of the outage, so that no
// live transition stands for one inside it.)
func TestPropertyNewestFirstBacklogYieldsTheTrueTransitionsAsHistoric(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Pings further apart than the hold: the backlog's are all behind.
		before := walk(t, 600*time.Millisecond, rapid.IntRange(1, 10).Draw(t, "before"))
		before[len(before)-1].p = outside
		gap := func() time.Duration { return ms(rapid.IntRange(600, 1500).Draw(t, "gap_ms")) }
		var outage []stamped
		at := before[len(before)-1].at
		for range rapid.IntRange(2, 60).Draw(t, "backlog") {
			at += gap()
			p := points[rapid.IntRange(0, len(points)-1).Draw(t, "point")]
			outage = append(outage, stamped{p: p, at: at, stamp: at})
		}
		outage[len(outage)-1].p = outside
		back := at + ms(rapid.IntRange(0, 200).Draw(t, "link_ms"))
		for k := range outage { // newest first, 1 ms apart
			outage[k].arrive = back + ms(len(outage)-1-k)
		}
		var after []stamped
		for range rapid.IntRange(0, 10).Draw(t, "after") {
			at += gap()
			after = append(after, stamped{p: points[rapid.IntRange(0, len(points)-1).Draw(t, "point")], at: at, stamp: at, arrive: at})
		}
		w := slices.Concat(before, outage, after)
		truth := truthOf(t, w)
		h := run(t, w, nil)
		if want, got := timelines(truth, h.rec.trans); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("newest-first backlog of %d:\n got  %v\n want %v", len(outage), got, want)
		}
		for _, tr := range h.rec.trans {
			// Outside at both ends, so what its newest ping shows was
			// revealed by the backlog as well.
			inside := tr.Event > t0.Add(before[len(before)-1].at).UnixNano() && tr.Event <= t0.Add(outage[len(outage)-1].at).UnixNano()
			if inside != tr.Historic {
				t.Fatalf("%s: historic %v, inside the outage %v", line(&tr), tr.Historic, inside)
			}
		}
		if len(h.rec.late) != 0 {
			t.Fatalf("%d pings late", len(h.rec.late))
		}
	})
}
