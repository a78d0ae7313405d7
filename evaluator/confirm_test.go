package evaluator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/still"
)

// A change needs the fix before it to agree: a fix clear of the margin
// whose predecessor lies on the old side of the edge, or within the
// margin of it, changes nothing, and the next one that agrees makes the
// change. A fence with "confirm": false changes on the first.
func TestAChangeNeedsTheFixBeforeToAgree(t *testing.T) {
	sec := func(i int) time.Duration { return time.Duration(i) * time.Second }
	// Metres into the depot, ±5 m (a margin of 6.5 m).
	fixes := []float64{-100, 50, 60, -50, 5, -50, -60, 4, 50, 60}
	run := func(h *harness) {
		for i, m := range fixes {
			h.sendAcc("d", westOfDepot(m), 5, sec(i), sec(i))
		}
		h.at(sec(len(fixes)))
	}
	h := newHarness(t, nil)
	run(h)
	// 50 m in after 100 m out: not yet; 60 m in: ENTER. 50 m out after
	// 60 m in: not yet; 5 m in (within the margin): inside still; 50 m
	// out after it: not yet; 60 m out: EXIT. 4 m in (within the margin,
	// on the new side): outside still; 50 m in after it: not yet, as it
	// agrees within the margin only; 60 m in: ENTER.
	h.want("d depot ENTER +2s", "d depot EXIT +6s", "d depot ENTER +9s")

	h = newHarness(t, nil)
	h.oneFixDecides()
	run(h)
	h.want("d depot ENTER +1s", "d depot EXIT +3s", "d depot ENTER +8s")
}

// A fix whose predecessor is more than fence.ConfirmWithin older is
// judged alone: a device that reports every 30 s is not a report late.
func TestASlowReporterIsJudgedOnEachFix(t *testing.T) {
	h := newHarness(t, nil)
	h.sendAcc("d", westOfDepot(-100), 5, 0, 0)
	h.sendAcc("d", westOfDepot(50), 5, 30*time.Second, 30*time.Second)
	h.sendAcc("d", westOfDepot(-50), 5, time.Minute, time.Minute)
	h.at(time.Minute + time.Second)
	h.want("d depot ENTER +30s", "d depot EXIT +1m0s")
}

// A device standing still changes no fence: parked 2 m outside the
// depot's edge with a receiver that says ±3 m and errs by 10, its fixes
// wander clear across the edge in pairs once it has stood there 30 s,
// and nothing happens; when it drives in, it enters.
func TestDeviceStandingStillChangesNoFence(t *testing.T) {
	h := newHarness(t, nil)
	at := time.Duration(0)
	send := func(m float64) {
		h.sendAcc("d", westOfDepot(m), 3, at, at)
		at += time.Second
	}
	for range 32 {
		send(-2) // within the margin: nothing either way
	}
	send(9) // clear inside, twice: a pair that agrees
	send(10)
	send(-9)
	send(-10)
	send(8)
	send(9)
	send(-2)
	h.at(at)
	h.want()
	send(60) // drives in: 60 m from the spot
	send(90)
	h.at(at)
	h.want("d depot ENTER +40s")
}

// parkWithLatePair drives device d into the depot (ENTER at +2 s), parks
// it at metres into the depot from +3 s to +59 s, 1 Hz at ±3 m, and
// delivers the fixes of +41 s and +42 s at out1 and out2 late, with the
// one of +44 s.
func parkWithLatePair(h *harness, metres, out1, out2 float64) {
	sec := func(i int) time.Duration { return time.Duration(i) * time.Second }
	h.sendAcc("d", westOfDepot(-100), 3, 0, 0)
	h.sendAcc("d", westOfDepot(40), 3, sec(1), sec(1))
	h.sendAcc("d", westOfDepot(30), 3, sec(2), sec(2))
	for i := 3; i < 60; i++ {
		if i == 41 || i == 42 {
			continue // on their way
		}
		h.sendAcc("d", westOfDepot(metres), 3, sec(i), sec(i))
		if i == 44 {
			h.sendAcc("d", westOfDepot(out1), 3, sec(41), sec(i))
			h.sendAcc("d", westOfDepot(out2), 3, sec(42), sec(i))
		}
	}
	h.at(sec(70))
}

// A late fix between two fixes of a device standing still stood still
// too: a pair of late fixes clear outside the edge a parked device is in
// by 2 m changes nothing, as it would have had they come in order.
func TestLateFixesBetweenStandingFixesChangeNothing(t *testing.T) {
	h := newHarness(t, nil)
	parkWithLatePair(h, 2, -10, -11)
	h.want("d depot ENTER +2s")
}

// However its fixes jitter around the spot where it stands (within half
// the standing radius of it, so within the radius of any mean of them),
// a device's fences change on none of its fixes taken once it has stood
// there still.For, wherever the spot is from an edge and whatever
// accuracy its fixes claim.
func TestPropertyDeviceStandingStillNeverFlips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness(t, nil)
		spot := rapid.Float64Range(-15, 15).Draw(t, "spot_m") // metres into the depot
		acc := rapid.Float64Range(0.5, 12).Draw(t, "acc")
		r := still.Radius(uint16(acc*10)) / 2
		ev, first := time.Duration(0), time.Duration(-1)
		for range rapid.IntRange(1, 120).Draw(t, "fixes") {
			ev += ms(rapid.IntRange(200, 3000).Draw(t, "gap_ms"))
			if first < 0 {
				first = ev
			}
			// Along the normal to the edge: the worst direction.
			m := spot + rapid.Float64Range(-r*0.99, r*0.99).Draw(t, "jitter_m")
			arrive := ev + ms(rapid.SampledFrom([]int{0, 50, 300}).Draw(t, "delay_ms"))
			h.sendAcc("d", westOfDepot(m), acc, ev, arrive)
		}
		h.at(ev + time.Hour)
		for _, tr := range h.rec.trans {
			if tr.Type != engine.Dwell && time.Duration(tr.Event-t0.UnixNano()) >= first+still.For {
				t.Fatalf("a %v at %v after standing %v: %q", tr.Type, time.Duration(tr.Event-t0.UnixNano()), time.Duration(still.For), h.rec.lines())
			}
		}
	})
}

// A late fix far from where a device stood, between two of its standing
// fixes, shows it left and came back: the late pair 100 m outside the
// depot is an EXIT, and the fix after it, back 20 m inside, an ENTER,
// however still the device had stood (confirmed by the fix before it
// that had come when it did: the pair came later).
func TestLateFixesFarFromWhereADeviceStoodShowItLeft(t *testing.T) {
	h := newHarness(t, nil)
	parkWithLatePair(h, 20, -100, -101)
	h.want("d depot ENTER +2s", "d depot EXIT +42s", "d depot ENTER +43s")
}

// A device walking slowly does not stand still: whatever its pace, it
// enters the fence it walks into, later the slower it walks (the margin
// alone waits until it is 1.5 × acc in; a walker who stays within the
// standing radius of where it was for 30 s, under about 0.8 m/s with
// acc 5 m, 1.3 m/s with acc 10 m, stands for a while first).
// The spot stays where its first fixes were: one that followed the
// newest fixes followed a walker at 0.5 m/s, who then never entered.
func TestADeviceWalkingSlowlyIsNotStandingStill(t *testing.T) {
	for _, c := range []struct {
		speed, acc float64 // m/s, m
		within     time.Duration
	}{{0.3, 5, 100 * time.Second}, {0.5, 5, 45 * time.Second}, {1.2, 5, 12 * time.Second}, {1.4, 10, 25 * time.Second}} {
		for _, from := range []float64{-20, -45, -70} { // metres out when it starts
			h := newHarness(t, nil)
			cross := time.Duration(-from / c.speed * float64(time.Second))
			for at := time.Duration(0); at < cross+2*c.within; at += time.Second {
				h.sendAcc("d", westOfDepot(from+c.speed*at.Seconds()), c.acc, at, at)
			}
			h.at(cross + 3*c.within)
			if len(h.rec.trans) == 0 {
				t.Fatalf("%.1f m/s from %v m out: no ENTER", c.speed, from)
			}
			if late := time.Duration(h.rec.trans[0].Event-t0.UnixNano()) - cross; late > c.within {
				t.Errorf("%.1f m/s from %v m out: ENTER %v after it crossed, want within %v", c.speed, from, late, c.within)
			}
		}
	}
}

// A backlog is judged standing as it would have been live: a device that
// went dark while driving, then parked 1 m into the depot with fixes
// that drift 8 m (or 13 m) in and out across the edge in 10 s spells,
// changes no fence from the backlog (flushed newest first after a fresh
// fix) once it has stood at its spot for 30 s, as in order. Before, no
// late fix of the backlog stood (none lay between two committed
// standing fixes) and it flipped every 20 s for as long as it stood
// there; and a late fix judged standing lost it again where one within
// 30 s before it lay farther than the standing radius from it (26 m
// apart, each within 17 m of the spot).
func TestABacklogOfAParkedDeviceStandsAsItWouldLive(t *testing.T) {
	sec := func(i int) time.Duration { return time.Duration(i) * time.Second }
	for _, drift := range []float64{8, 13} {
		at := func(i int) pos { // out at first, then parked 1 m in, ± drift
			switch {
			case i == 0:
				return westOfDepot(-100)
			case i/10%4 == 1:
				return westOfDepot(1 + drift)
			case i/10%4 == 3:
				return westOfDepot(1 - drift)
			default:
				return westOfDepot(1)
			}
		}
		const last = 150
		inOrder := newHarness(t, nil)
		for i := 0; i <= last; i++ {
			inOrder.sendAcc("d", at(i), 3, sec(i), sec(i))
		}
		inOrder.at(sec(last + 60))
		backlog := newHarness(t, nil)
		backlog.sendAcc("d", at(0), 3, 0, 0)
		arrive := sec(last + 1)
		backlog.sendAcc("d", at(last), 3, sec(last), arrive)
		for i := last - 1; i > 0; i-- {
			backlog.sendAcc("d", at(i), 3, sec(i), arrive+time.Duration(last-i)*time.Millisecond)
		}
		backlog.at(sec(last + 60))
		// The spot's first fix is the second inside (the first alone is an
		// outlier of the spot out at -100 m): standing from 2 s + 30 s.
		for _, h := range []*harness{inOrder, backlog} {
			for _, tr := range h.rec.trans {
				if tr.Event-t0.UnixNano() >= int64(sec(32)) {
					t.Fatalf("drift %v m: a change after the device stood: %q", drift, h.rec.lines())
				}
			}
		}
	}
}

// A backlog of an outage that began while the device stood and ended
// after it drove away stands where it stood before the outage: a device
// parked 1 m into the depot with fixes drifting 8 m across the edge in
// 10 s spells enters (and leaves) as they drift, stands inside, goes dark for 100 s, drives 200 m
// out and flushes the backlog newest first: the one change since it
// stood is its EXIT, at the fresh fix that came first. Before, the
// backlog had no committed standing fix after it and the history too
// few before it to stand: it flipped out and back in, historic.
func TestABacklogFromWhereADeviceStoodStandsThere(t *testing.T) {
	sec := func(i int) time.Duration { return time.Duration(i) * time.Second }
	const dark, left, last = 45, 160, 170
	at := func(i int) pos {
		switch {
		case i == 0 || i >= left:
			return westOfDepot(-200)
		case i/10%2 == 1:
			return westOfDepot(9)
		default:
			return westOfDepot(-7)
		}
	}
	h := newHarness(t, nil)
	for i := 0; i < dark; i++ {
		h.sendAcc("d", at(i), 3, sec(i), sec(i))
	}
	h.sendAcc("d", at(last), 3, sec(last), sec(last))
	for i := last - 1; i >= dark; i-- {
		h.sendAcc("d", at(i), 3, sec(i), sec(last)+time.Duration(last-i)*time.Millisecond)
	}
	h.at(sec(last + 60))
	var after []string
	for _, tr := range h.rec.trans {
		if ev := time.Duration(tr.Event - t0.UnixNano()); ev >= sec(32) && tr.Type != engine.Dwell {
			after = append(after, fmt.Sprintf("%v +%v", tr.Type, ev))
		}
	}
	if fmt.Sprint(after) != fmt.Sprint([]string{"EXIT +" + sec(last).String()}) {
		t.Fatalf("changes after it stood: %q (all: %q)", after, h.rec.lines())
	}
}

// A parked receiver whose acc understates its error stops flipping once
// it has shown it: 1 m inside the depot's edge for an hour, its error
// drifting (30 s correlation) with σ 10 or 20 m per axis while it
// reports half of that or less, it changes no fence after its first 15
// minutes, as its fixes keep coming back from near the standing
// radius's edge and the radius grows. Before, its drift left the radius
// every few minutes and it flipped 10 to 26 times an hour. So does one
// whose error jumps from fix to fix (white, or 5 s correlation) with σ
// 20 m while it reports 5 m: its fixes left the 25 m radius every few
// fixes, it never stood, its radius never grew, and it flipped 150 to
// 380 times an hour for as long as it stood there.
func TestAParkedReceiverThatUnderstatesItsErrorStopsFlipping(t *testing.T) {
	for _, c := range []struct{ sigma, acc, corr float64 }{{10, 5, 30}, {10, 7.5, 30}, {20, 10, 30}, {20, 5, 0}, {20, 5, 5}} {
		for seed := range 3 {
			h := newHarness(t, nil)
			r := rand.New(rand.NewPCG(uint64(seed), 9))
			rho := 0.0 // white
			if c.corr > 0 {
				rho = math.Exp(-1.0 / c.corr)
			}
			var ex, ey float64
			for i := range 3600 {
				ex = rho*ex + math.Sqrt(1-rho*rho)*c.sigma*r.NormFloat64()
				ey = rho*ey + math.Sqrt(1-rho*rho)*c.sigma*r.NormFloat64()
				at := time.Duration(i) * time.Second
				p := westOfDepot(1 + ex)
				p.lat += ey / 111_320
				h.sendAcc("d", p, c.acc, at, at+200*time.Millisecond)
			}
			h.at(time.Hour + time.Minute)
			for _, tr := range h.rec.trans {
				if at := time.Duration(tr.Event - t0.UnixNano()); tr.Type != engine.Dwell && at > 15*time.Minute {
					t.Fatalf("σ %v m, acc %v m, correlation %v s, seed %d: %v at %v: %q", c.sigma, c.acc, c.corr, seed, tr.Type, at, h.rec.lines())
				}
			}
		}
	}
}
