package evaluator

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/history"
	"github.com/edgefence/edgefence/evaluator/payload"
	"pgregory.net/rapid"
)

// mPerDegLon is a degree of longitude at the test fences, in metres.
var mPerDegLon = 6371008.8 * math.Pi / 180 * math.Cos(52.505*math.Pi/180)

// westOfDepot is a point d metres east of the depot's west edge (inside
// for d > 0), away from the other fences.
func westOfDepot(d float64) pos { return pos{52.505, 13.400 + d/mPerDegLon} }

// sendAcc is send with an accuracy in metres.
func (h *harness) sendAcc(dev string, p pos, acc float64, event, arrive time.Duration) {
	ingest := t0.Add(arrive)
	pp := payload.Position{Lat: p.lat, Lon: p.lon, TsNs: t0.Add(event).UnixNano(), HasTs: true, Acc: acc, HasAcc: acc > 0}
	pg := engine.NewPing(h.cfg.Clamper(), dev, &pp, ingest)
	h.proc.Advance(ingest)
	h.proc.Ingest(&pg)
	h.proc.Advance(ingest)
}

// fix is a ping with an accuracy, stamped at event and arriving at
// arrive (offsets from t0).
type fix struct {
	p             pos
	acc           float64
	event, arrive time.Duration
}

// sendInArrivalOrder delivers fixes as the server gets them: in arrival
// order (the server's clock never runs back), those arriving together in
// the order given.
func (h *harness) sendInArrivalOrder(dev string, fixes []fix) {
	fixes = slices.Clone(fixes)
	slices.SortStableFunc(fixes, func(a, b fix) int { return cmp.Compare(a.arrive, b.arrive) })
	for _, f := range fixes {
		h.sendAcc(dev, f.p, f.acc, f.event, f.arrive)
	}
}

// A fix within the margin (twice its accuracy by default) of the edge
// changes nothing there: it must be inside by more than that to ENTER
// and outside by more than it to EXIT. Without accuracy, or with one
// worse than the cap, the position alone decides, as before.
func TestAccuracyHysteresis(t *testing.T) {
	h := newHarness(t, marginTwo)
	h.oneFixDecides()
	step := func(i int) time.Duration { return time.Duration(i) * time.Second }
	pings := []struct {
		p   pos
		acc float64
	}{
		{westOfDepot(30), 20},  // inside by 30 m, ±20 m: not yet
		{westOfDepot(50), 20},  // inside by more than twice its error: ENTER
		{westOfDepot(-10), 20}, // outside by 10 m, ±20 m: still inside
		{westOfDepot(-30), 20}, // outside by more than its error, not twice: still inside
		{westOfDepot(-50), 20}, // outside by more: EXIT
		{westOfDepot(10), 150}, // ±150 m is over the 100 m cap: position alone, ENTER
		{westOfDepot(-10), 0},  // no accuracy: position alone, EXIT
	}
	for i, p := range pings {
		h.sendAcc("d", p.p, p.acc, step(i), step(i))
	}
	h.at(step(len(pings)))
	h.want("d depot ENTER +1s", "d depot EXIT +4s", "d depot ENTER +5s", "d depot EXIT +6s")
}

// The margin is a setting: at 1 a fix outside by more than its accuracy
// is enough, at 3 one outside by 50 m ±20 m is not.
func TestAccuracyMargin(t *testing.T) {
	for _, c := range []struct {
		margin float64
		want   []string
	}{
		{1, []string{"d depot ENTER +0s", "d depot EXIT +1s"}},
		{3, []string{"d depot ENTER +0s"}},
	} {
		h := newHarness(t, func(cfg *engine.Config) { cfg.AccuracyMargin = c.margin })
		h.oneFixDecides()
		h.sendAcc("d", westOfDepot(100), 20, 0, 0)
		h.sendAcc("d", westOfDepot(-50), 20, time.Second, time.Second)
		h.sendAcc("d", westOfDepot(-30), 10, 2*time.Second, 2*time.Second) // within 3 × 10 m
		h.at(3 * time.Second)
		h.want(c.want...)
	}
}

// A device parked at a distance from a fence's edge (inside or out)
// whose fixes err by up to that distance plus the margin times their
// accuracy, in any direction, with any accuracy within the caps and any
// reordering, never flips: inside, it ENTERs once, when a fix first
// clears the margin, and never EXITs; outside, it never ENTERs. The
// fleet's white noise (per-axis deviation = acc) stays within that bound
// in all but about 3 of 10,000 fixes at the default margin.
func TestPropertyParkedNearEdgeNeverFlips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		margin := rapid.SampledFrom([]float64{1, engine.DefaultAccuracyMargin, 3}).Draw(t, "margin")
		h := newHarness(t, func(cfg *engine.Config) { cfg.AccuracyMargin = margin })
		inside := rapid.Bool().Draw(t, "inside")
		dist := rapid.Float64Range(0, 150).Draw(t, "metres")
		ev := time.Duration(0)
		var fixes []fix
		for range rapid.IntRange(1, 40).Draw(t, "pings") {
			ev += ms(rapid.IntRange(200, 2000).Draw(t, "gap_ms"))
			arrive := ev + ms(rapid.SampledFrom([]int{0, 100, 300, 2500, 6000}).Draw(t, "delay_ms"))
			// The engine keeps accuracies in decimetres and positions to
			// 1e-7 degrees (under a centimetre): the bound keeps 2 cm off
			// the margin.
			// margin × acc stays within 100 m, under ¾ of the depot's
			// depth (half its 678 m width), where the margin is capped
			// (TestSettleSmallFence).
			acc := float64(rapid.IntRange(1, int(min(h.cfg.MaxAccuracy, 100/margin)*10)).Draw(t, "acc_dm")) / 10
			bound := dist + margin*acc - 0.02
			r := rapid.Float64Range(0, max(bound, 0)).Draw(t, "err")
			a := rapid.Float64Range(0, 2*math.Pi).Draw(t, "direction")
			east := dist
			if !inside {
				east = -dist
			}
			east += r * math.Cos(a)
			north := r * math.Sin(a)
			p := westOfDepot(east)
			p.lat += north / 111_195
			fixes = append(fixes, fix{p, acc, ev, arrive})
		}
		h.sendInArrivalOrder("d", fixes)
		h.at(ev + time.Hour)
		var got []string
		for _, tr := range h.rec.trans {
			if tr.Fence == "depot" && tr.Type != engine.Dwell {
				got = append(got, tr.Type.String())
			}
		}
		if inside && len(got) > 1 || inside && len(got) == 1 && got[0] != "ENTER" || !inside && len(got) > 0 {
			t.Fatalf("parked %s by %.1f m, margin %v: %v\n%q", map[bool]string{true: "inside", false: "outside"}[inside], dist, margin, got, h.rec.lines())
		}
	})
}

// A late ping straddling the edge, reconciled into the history, reveals
// no EXIT and ENTER: the history honours accuracy as the live path does.
func TestAccuracyHysteresisInHistory(t *testing.T) {
	h := newHarness(t, nil)
	for i := range 6 {
		at := time.Duration(i) * time.Second
		h.sendAcc("d", westOfDepot(60), 10, at, at)
	}
	h.sendAcc("d", westOfDepot(-10), 20, 2500*time.Millisecond, 6*time.Second) // late, outside by 10 m ±20 m
	h.at(time.Minute)
	h.want("d depot ENTER +0s")
	if h.m.Reconciled.Get() != 1 {
		t.Fatalf("reconciled %d late pings, want 1", h.m.Reconciled.Get())
	}
}

// Late pings placed after a committed fix that was near the edge start
// from the state the live path had there, not from that fix's position
// alone: a device inside whose fix 5 m outside (±10 m) kept it inside
// gets no second ENTER from a late fix deep inside after it.
func TestAccuracyHysteresisHistoryStartsFromSettledState(t *testing.T) {
	h := newHarness(t, nil)
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	h.sendAcc("d", westOfDepot(100), 10, 0, 0)
	h.sendAcc("d", westOfDepot(-5), 10, sec(1), sec(1)) // near the edge: still inside
	h.sendAcc("d", westOfDepot(-5), 10, sec(3), sec(3))
	h.sendAcc("d", westOfDepot(100), 10, sec(1.5), sec(6)) // late
	h.sendAcc("d", westOfDepot(-100), 10, sec(2), sec(6))  // late: out by more than the margin
	h.at(sec(7))
	h.sendAcc("d", westOfDepot(-100), 10, sec(8), sec(8))
	h.at(time.Minute)
	// In event order, as the device lived them, they alternate.
	var got []engine.Transition
	for _, tr := range h.rec.trans {
		if tr.Fence == "depot" && tr.Type != engine.Dwell {
			got = append(got, tr)
		}
	}
	slices.SortStableFunc(got, func(a, b engine.Transition) int { return cmp.Compare(a.Event, b.Event) })
	for i, tr := range got {
		if want := []engine.Type{engine.Enter, engine.Exit}[i%2]; tr.Type != want {
			t.Fatalf("transition %d in event order is %s, want %s: %q", i, tr.Type, want, h.rec.lines())
		}
	}
	if len(got) == 0 || got[0].Event != t0.UnixNano() {
		t.Fatalf("want the ENTER at +0s first: %q", h.rec.lines())
	}
}

// A device whose first fixes are 1 m inside ±1 m never ENTERed (within
// the margin of 2 m): a late fix placed among them starts from that
// state, not from the oldest fix's position alone, so a fix 1 m outside
// ±0.5 m (near the edge too) reveals no EXIT, and the ENTER that a fix
// inside by more than its margin made live stands alone (no historic
// EXIT and ENTER before and at it).
func TestAccuracyHysteresisHistoryStartsFromNothing(t *testing.T) {
	h := newHarness(t, marginTwo)
	h.oneFixDecides()
	at := func(i int) time.Duration { return time.Duration(i) * 200 * time.Millisecond }
	for i := 1; i <= 6; i++ {
		h.sendAcc("d", westOfDepot(1), 1, at(i), at(i))
	}
	h.sendAcc("d", westOfDepot(1.05), 0.5, at(8), at(8))                     // inside by more than 2 × 0.5 m: ENTER
	h.sendAcc("d", westOfDepot(-1), 0.5, at(7), at(7)+2500*time.Millisecond) // late, near the edge
	h.at(time.Minute)
	h.want("d depot ENTER +1.6s")
	if h.m.Reconciled.Get() != 1 {
		t.Fatalf("reconciled %d late pings, want 1", h.m.Reconciled.Get())
	}
}

// So does one placed after the history dropped its oldest fixes: the
// live path kept the device outside against every kept fix's position,
// and the history starts from that, not from the oldest kept fix's
// position alone (inside), so a late fix clear of the edge outside
// reveals no EXIT.
func TestAccuracyHysteresisHistoryStartsFromAHeldFix(t *testing.T) {
	h := newHarness(t, marginTwo)
	h.oneFixDecides()
	at := func(i int) time.Duration { return time.Duration(i) * 200 * time.Millisecond }
	n := h.cfg.HistoryPoints + 1
	for i := 1; i <= n; i++ {
		h.sendAcc("d", westOfDepot(1), 1, at(i), at(i))
	}
	h.sendAcc("d", westOfDepot(1.05), 0.5, at(n+2), at(n+2))                     // ENTER
	h.sendAcc("d", westOfDepot(-2.5), 1, at(n+1), at(n+1)+2500*time.Millisecond) // late, clear of the edge
	h.at(time.Minute)
	h.want("d depot ENTER +3.8s")
}

// A late fix clear inside, among fixes near the edge that kept a device
// outside, reveals its stay: the fixes after it keep the state it set, up
// to the live one, as a later late fix clear outside ends it. (A run of
// late pings was compared with the committed point right after it only,
// and a difference there taken for a transition published there: both
// were lost.)
func TestAccuracyHysteresisLateClearFixAmongHeldOnes(t *testing.T) {
	h := newHarness(t, nil)
	h.oneFixDecides()
	at := func(i int) time.Duration { return time.Duration(i) * 200 * time.Millisecond }
	for i := 1; i <= 6; i++ {
		h.sendAcc("d", westOfDepot(1), 1, at(i), at(i)) // within the margin: outside
	}
	h.sendAcc("d", westOfDepot(2.5), 1, at(3)+100*time.Millisecond, at(7)) // late, clear inside
	h.at(at(7) + 10*time.Second)
	h.sendAcc("d", westOfDepot(-2.5), 1, at(5)+100*time.Millisecond, at(7)+10*time.Second) // late, clear outside
	h.at(time.Minute)
	h.want("d depot ENTER +700ms", "d depot EXIT +1.1s")
}

// A late fix clear inside whose ENTER a live one published later stands
// for leaves the fixes between them as published (outside): a later late
// fix clear outside among them reveals no EXIT, and no second ENTER.
func TestAccuracyHysteresisLateFixInsideAStayPublishedLater(t *testing.T) {
	h := newHarness(t, marginTwo)
	h.oneFixDecides()
	at := func(i int) time.Duration { return time.Duration(i) * 200 * time.Millisecond }
	var fixes []fix
	for i := 1; i <= 14; i++ {
		f := fix{westOfDepot(1), 1, at(i), at(i)} // within the margin
		switch i {
		case 8:
			f = fix{westOfDepot(2.5), 1, at(i), at(i) + 2500*time.Millisecond} // late, clear inside
		case 12:
			f = fix{westOfDepot(-2.5), 1, at(i), at(i) + 6*time.Second} // late, clear outside
		case 14:
			f = fix{westOfDepot(2.5), 1, at(i), at(i)} // clear inside: ENTER
		}
		fixes = append(fixes, f)
	}
	h.sendInArrivalOrder("d", fixes)
	h.at(time.Minute)
	if err := alternates(h.rec.trans); err != "" {
		t.Fatalf("%s: %q", err, h.rec.lines())
	}
	h.want("d depot ENTER +2.8s")
}

// corner is the depot's south-east corner, the yard's south-west one, on
// the zone's south edge: a fix there is within its margin of all three.
var corner = pos{52.500, 13.410}

// A fix at a corner held in several fences, then the oldest kept, starts
// a late fix's replay from the state it recorded in each fence, not from
// the other side of every fence near it: a late fix clear outside the
// depot among fixes that never entered it reveals no EXIT.
func TestAccuracyHysteresisHistoryStartsFromAFixHeldInSeveralFences(t *testing.T) {
	h := newHarness(t, nil)
	var fixes []fix
	for i := 1; i <= 20; i++ {
		f := fix{westOfDepot(1), 1, ms(200 * i), ms(200 * i)} // within the depot's margin: outside
		switch i {
		case 4:
			f.p = corner // held in all three; the oldest kept when the late fix comes
		case 7:
			f = fix{westOfDepot(-2.5), 1, ms(200 * i), ms(200*i + 6000)} // late, clear outside
		}
		fixes = append(fixes, f)
	}
	h.sendInArrivalOrder("d", fixes)
	h.at(time.Minute)
	h.want()
}

// A late fix clear inside the zone whose ENTER a later live one published
// starts the stay's dwell where it was: the DWELL that this brings before
// what was committed comes no earlier than the published ENTER, so as not
// to precede it.
func TestAccuracyHysteresisDwellOfAStayPublishedLater(t *testing.T) {
	h := newHarness(t, nil)
	h.oneFixDecides()
	mid := pos{52.505, 13.410} // the zone's middle, on the depot's and yard's shared edge
	h.sendInArrivalOrder("d", []fix{
		{westOfDepot(1), 1, ms(200), ms(200)},
		{westOfDepot(1), 1, ms(400), ms(400)},
		{mid, 1, ms(600), ms(3100)}, // late: inside the zone
		{corner, 1, ms(800), ms(800)},
		{corner, 1, ms(1887), ms(1887)},
		{mid, 1, ms(3601), ms(3601)}, // ENTER, which stands for the late fix's
	})
	h.at(time.Minute)
	if err := alternates(h.rec.trans); err != "" {
		t.Fatalf("%s: %q", err, h.rec.lines())
	}
	h.want("d zone ENTER +3.601s", "d zone DWELL +3.601s")
}

// A stay whose ENTER was published live and whose end late fixes reveal
// before its dwell came gets no DWELL when they are placed.
func TestAccuracyHysteresisNoDwellAfterARevealedExit(t *testing.T) {
	h := newHarness(t, nil)
	h.oneFixDecides()
	var fixes []fix
	for i := 1; i <= 8; i++ {
		fixes = append(fixes, fix{westOfDepot(1), 1, ms(200 * i), ms(200 * i)})
	}
	fixes = append(fixes,
		fix{westOfDepot(1), 1, ms(1800), ms(4300)},      // late
		fix{pos{52.505, 13.410}, 1, ms(2000), ms(2000)}, // the zone's middle: ENTER
		fix{westOfDepot(1), 1, ms(3029), ms(5529)},      // late, clear outside the zone: EXIT
		fix{corner, 1, ms(5000), ms(5000)},              // within the zone's margin: held
	)
	h.sendInArrivalOrder("d", fixes)
	h.at(time.Minute)
	h.want("d zone ENTER +2s", "d zone EXIT +3.029s")
}

// A late fix whose change in one fence a later live EXIT stands for, and
// whose changes in two others were published where it was, is kept for
// their sake, recording the first fence's state there as published (the
// one before it). Later late fixes around it are judged against that:
// they reveal the depot's EXIT and ENTER before it and after it, where
// the device left and came back, and no second EXIT. (Judged from the
// late fix's own state, the depot's ENTER after it was revealed with an
// EXIT at the live one again.)
func TestAccuracyHysteresisLateFixKeptForAnotherFence(t *testing.T) {
	h := newHarness(t, nil)
	h.oneFixDecides()
	m := moved
	out := m(pos{52.500, 13.400}, -5, -5) // outside every fence
	fixes := []fix{
		{m(pos{52.505, 13.405}, -5, -5), 0.5, ms(200), ms(200)},  // in the depot: ENTER
		{out, 0.5, ms(400), ms(6400)},                            // late
		{m(pos{52.505, 13.415}, -5, -5), 0.5, ms(600), ms(3100)}, // late, in the yard and zone
		{m(pos{52.500, 13.400}, 1, 1), 0.5, ms(800), ms(6800)},   // late, within the depot's margin
		{out, 0.5, ms(1000), ms(1000)},                           // EXIT
	}
	h.sendInArrivalOrder("d", fixes)
	h.at(time.Minute)
	if err := alternates(h.rec.trans); err != "" {
		t.Fatalf("%s: %q", err, h.rec.lines())
	}
	h.want("d depot ENTER +200ms", "d depot EXIT +1s", "d yard ENTER +600ms", "d zone ENTER +600ms", "d yard EXIT +1s", "d zone EXIT +1s",
		"d depot EXIT +400ms", "d depot ENTER +800ms")
}

// A device that leaves the zone after its dwell came due, while a late
// fix stamped before the DWELL waits to be placed, owes the DWELL until
// it is: here the late fix shows it left and came back, so the stay
// before the EXIT was too short, and no DWELL comes. (It went out before
// the EXIT, historic, and then preceded the EXIT the late fix revealed.)
func TestAccuracyHysteresisDwellOwedUntilLateFixesArePlaced(t *testing.T) {
	h := newHarness(t, nil)
	h.oneFixDecides()
	mid := pos{52.505, 13.410} // the zone's middle
	var fixes []fix
	for i := 1; i <= 16; i++ {
		fixes = append(fixes, fix{mid, 1, ms(200 * i), ms(200 * i)})
	}
	fixes[1] = fix{westOfDepot(1), 1, ms(400), ms(3000)}              // late: out of the zone
	fixes = append(fixes, fix{westOfDepot(1), 1, ms(3400), ms(3400)}) // EXIT
	h.sendInArrivalOrder("d", fixes)
	h.at(time.Minute)
	if err := alternates(h.rec.trans); err != "" {
		t.Fatalf("%s: %q", err, h.rec.lines())
	}
	h.want("d zone ENTER +200ms", "d zone EXIT +3.4s", "d zone EXIT +400ms", "d zone ENTER +600ms")
}

// A DWELL owed (the device left while a late ping stamped before it
// waited) is not paid when the device comes back before the late pings
// are placed: they may yet be moved, here by a step back that two of them
// agree on, into the stay, and show that it ended before the DWELL.
func TestAccuracyHysteresisOwedDwellWaitsPastAReEnter(t *testing.T) {
	h := newHarness(t, nil)
	m := moved
	out := m(pos{52.500, 13.400}, -5, -5)   // outside every fence
	edge := m(pos{52.505, 13.410}, -5, 0)   // in the depot and zone, on the yard's edge
	held := m(pos{52.500, 13.410}, -2.5, 0) // within its margin (±2 m) of the depot's and zone's edges
	var fixes []fix
	for i := 1; i <= 14; i++ {
		fixes = append(fixes, fix{out, 0.5, ms(200 * i), ms(200 * i)})
	}
	fixes[11].arrive = ms(8400) // 6 s late
	fixes = append(fixes,
		fix{edge, 0.5, ms(3038), ms(3038)}, // ENTER
		fix{held, 2, ms(3312), ms(3312)},
		fix{held, 2, ms(4260), ms(10260)},
		fix{out, 0.5, ms(6260), ms(8760)}, // 2.5 s late
		fix{held, 2, ms(7901), ms(7901)},
		fix{held, 2, ms(8101), ms(8101)},
		fix{edge, 0.5, ms(8501), ms(8501)},
		fix{out, 0.5, ms(8701), ms(8701)},    // EXIT: the zone's DWELL (+6.038 s) is owed
		fix{edge, 0.5, ms(10701), ms(10701)}, // back before the late pings are placed
	)
	for e := 8901; e <= 11901; e += 200 {
		if e != 10701 {
			fixes = append(fixes, fix{out, 0.5, ms(e), ms(e)})
		}
	}
	fixes[len(fixes)-1].arrive = ms(14401) // with the one at 10.501 s, 2.5 s late: a step back
	fixes[len(fixes)-7].arrive = ms(13001)
	h.sendInArrivalOrder("d", fixes)
	h.at(time.Minute)
	if err := alternates(h.rec.trans); err != "" {
		t.Fatalf("%s: %q", err, h.rec.lines())
	}
}

// Late pings that the clock model takes for a step back are moved after
// the pings before them and placed live; a DWELL that came due while
// they waited waits for those stamped before it, and for the late ones
// still in the batch: here they show the device left the zone before it.
func TestAccuracyHysteresisDwellWaitsForMovedPings(t *testing.T) {
	h := newHarness(t, nil)
	m := moved
	out := m(pos{52.500, 13.400}, -5, -5) // outside every fence
	var fixes []fix
	for i := 1; i <= 6; i++ {
		fixes = append(fixes, fix{out, 0.5, ms(200 * i), ms(200 * i)})
	}
	fixes = append(fixes,
		fix{m(pos{52.505, 13.410}, -5, -5), 0.5, ms(1400), ms(1400)},   // in the depot and zone
		fix{m(pos{52.505, 13.405}, -5, 0), 0.5, ms(1600), ms(1600)},    // on the zone's edge
		fix{out, 0.5, ms(1800), ms(4300)},                              // late
		fix{out, 0.5, ms(2000), ms(4500)},                              // late
		fix{m(pos{52.500, 13.405}, -2.5, -2.5), 2, ms(2200), ms(2200)}, // within both margins
		fix{m(pos{52.500, 13.405}, -2.5, -2.5), 2, ms(2400), ms(2400)},
		fix{out, 0.5, ms(2600), ms(5100)}, // late
		fix{m(pos{52.505, 13.410}, -5, -5), 0.5, ms(4401), ms(4401)},
	)
	h.sendInArrivalOrder("d", fixes)
	h.at(time.Minute)
	h.wantAlternatingWithoutDwell()
}

// A batch placed at its cap while late pings still come keeps its
// newest for the next one; a DWELL that the placed pings bring due waits
// for those too: here one of them shows the device left before it.
func TestAccuracyHysteresisDwellWaitsForPingsKeptForTheNextBatch(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.AccuracyMargin = 2 }) // the margins below are at 2 × acc
	h.oneFixDecides()
	m := moved
	out := m(pos{52.500, 13.400}, -5, -5)      // outside every fence
	edge := m(pos{52.500, 13.405}, -2.5, -2.5) // within the depot's and zone's margins
	in := m(pos{52.505, 13.410}, -5, -5)       // in the depot and zone
	var fixes []fix
	for _, e := range []int{200, 400, 600, 800, 1000, 1400, 1600, 1800, 2001, 2202, 2403, 2604, 2806, 3009, 3214, 3419, 3624, 3830, 4535} {
		fixes = append(fixes, fix{out, 0.5, ms(e), ms(e)})
	}
	// Late ones keep the batch open from 3.7 s to its cap, 12 s later.
	fixes = append(fixes, fix{out, 0.5, ms(1200), ms(3700)}, fix{out, 0.5, ms(4094), ms(6594)}, fix{out, 0.5, ms(5414), ms(7914)}, fix{out, 0.5, ms(6527), ms(10527)})
	fixes = append(fixes,
		fix{in, 0.5, ms(8228), ms(8228)},    // ENTER; the zone's DWELL is due at 11.228 s
		fix{out, 0.5, ms(10228), ms(12728)}, // late: left before it; kept for the next batch
		fix{edge, 2, ms(10452), ms(10452)},
		fix{out, 0.5, ms(11700), ms(15700)}, // late
		fix{out, 0.5, ms(11900), ms(17900)}, // late
		fix{edge, 2, ms(12728), ms(12728)},
	)
	h.sendInArrivalOrder("d", fixes)
	h.at(time.Minute)
	h.want("d depot ENTER +8.228s", "d zone ENTER +8.228s", "d depot EXIT +10.228s", "d zone EXIT +10.228s")
}

// Late pings that the clock model moves after a step back are placed in
// event order: the one that shows the device left the zone comes before
// the one inside after it, and no DWELL is decided on the latter while the
// former is taken for late behind it.
func TestAccuracyHysteresisMovedPingsPlacedInEventOrder(t *testing.T) {
	h := newHarness(t, nil)
	m := moved
	out := m(pos{52.500, 13.400}, -5, -5) // outside every fence
	in := m(pos{52.505, 13.410}, -5, -5)  // in the depot and zone
	var fixes []fix
	for e := 200; e <= 4400; e += 200 {
		fixes = append(fixes, fix{out, 0.5, ms(e), ms(e)})
	}
	fixes[14] = fix{out, 0.5, ms(3000), ms(5500)} // late
	fixes = append(fixes,
		fix{in, 0.5, ms(4601), ms(4601)}, // ENTER
		fix{out, 0.5, ms(4891), ms(10891)},
		fix{in, 0.5, ms(6000), ms(8500)},
		fix{out, 0.5, ms(6200), ms(10200)},
		fix{out, 0.5, ms(6500), ms(10500)},
	)
	h.sendInArrivalOrder("d", fixes)
	h.at(time.Minute)
	h.wantAlternatingWithoutDwell()
}

// A fence's max_accuracy overrides the engine's cap; 0 switches the
// hysteresis off for that fence.
func TestAccuracyCapPerFence(t *testing.T) {
	h := newHarness(t, nil)
	h.set = mustFences(t, `{"type":"FeatureCollection","features":[
	 {"type":"Feature","id":"strict","properties":{"max_accuracy":0},"geometry":{"type":"Polygon","coordinates":[[[13.400,52.500],[13.410,52.500],[13.410,52.510],[13.400,52.510],[13.400,52.500]]]}},
	 {"type":"Feature","id":"lax","properties":{"max_accuracy":500,"confirm":false},"geometry":{"type":"Polygon","coordinates":[[[13.400,52.500],[13.410,52.500],[13.410,52.510],[13.400,52.510],[13.400,52.500]]]}}]}`)
	h.sendAcc("d", westOfDepot(10), 200, 0, 0)                      // ±200 m: strict takes the position, lax waits
	h.sendAcc("d", westOfDepot(339), 150, time.Second, time.Second) // the middle: 339 m from every edge
	h.at(2 * time.Second)
	h.want("d strict ENTER +0s", "d lax ENTER +1s")
}

// OwnTracks' acc is honoured like the canonical one.
func TestOwnTracksAccuracyHonoured(t *testing.T) {
	h := newHarness(t, nil)
	h.oneFixDecides()
	var dec payload.Decoder
	for i, lon := range []float64{westOfDepot(10).lon, westOfDepot(50).lon} {
		at := time.Duration(i) * time.Second
		body := []byte(`{"_type":"location","lat":52.505,"lon":` + ftoa(lon) + `,"tst":` + itoa(t0.Add(at).Unix()) + `,"acc":20}`)
		p, err := dec.Decode(body, payload.OwnTracks)
		if err != nil {
			t.Fatal(err)
		}
		pg := engine.NewPing(h.cfg.Clamper(), "phone", &p, t0.Add(at))
		h.proc.Ingest(&pg)
		h.at(at)
	}
	h.at(2 * time.Second)
	h.want("phone depot ENTER +1s")
}

// A ping exactly on a fence's edge with any accuracy (within the cap)
// never causes a transition, live or historic, so never two in a row,
// whatever came before and whatever reordering the hold or the history
// undid. A transition is the edge ping's when it carries that ping's
// position: its event time is no mark, as the clock model may move pings
// on the timeline (delayed pings that agree, with none after them, are a
// step back: docs/clock.md), and then another ping's transition can land
// on an edge ping's instant.
func TestPropertyPingOnEdgeNeverFlips(t *testing.T) {
	corners := [][2]float64{{13.400, 52.500}, {13.410, 52.500}, {13.410, 52.510}, {13.400, 52.510}}
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness(t, nil)
		// Where the pings were, as the engine keeps positions; one off the
		// edges may share a position with one on them (0 m from the west
		// edge): then the transition is not told apart, and not checked.
		onEdge, offEdge := map[pos]bool{}, map[pos]bool{}
		ev := time.Duration(0)
		var fixes []fix
		for range rapid.IntRange(1, 40).Draw(t, "pings") {
			ev += ms(rapid.IntRange(200, 2000).Draw(t, "gap_ms"))
			// Some arrive seconds late: reconciled into the history, which
			// honours accuracy the same way.
			arrive := ev + ms(rapid.SampledFrom([]int{0, 100, 300, 2500, 6000}).Draw(t, "delay_ms"))
			switch rapid.IntRange(0, 2).Draw(t, "kind") {
			case 0:
				p := westOfDepot(rapid.Float64Range(-200, 200).Draw(t, "metres"))
				fixes = append(fixes, fix{p, rapid.Float64Range(0, 50).Draw(t, "acc"), ev, arrive})
				offEdge[quantized(p)] = true
			default:
				i := rapid.IntRange(0, 3).Draw(t, "edge")
				a, b := corners[i], corners[(i+1)%4]
				s := rapid.Float64Range(0, 1).Draw(t, "along")
				p := pos{a[1] + s*(b[1]-a[1]), a[0] + s*(b[0]-a[0])}
				fixes = append(fixes, fix{p, rapid.Float64Range(0.1, h.cfg.MaxAccuracy).Draw(t, "edge_acc"), ev, arrive})
				onEdge[quantized(p)] = true
			}
		}
		h.sendInArrivalOrder("d", fixes)
		h.at(ev + time.Hour)
		for _, tr := range h.rec.trans {
			if at := (pos{tr.Lat, tr.Lon}); tr.Fence == "depot" && tr.Type != engine.Dwell && onEdge[at] && !offEdge[at] {
				t.Fatalf("a ping on the edge caused %s (historic %v, at %.7f, %.7f):\n%q", line(&tr), tr.Historic, tr.Lat, tr.Lon, h.rec.lines())
			}
		}
		if err := alternatesLate(h.rec.trans, fixes); err != "" {
			t.Fatalf("%s:\n%q", err, h.rec.lines())
		}
	})
}

// alternates checks that each device's transitions in each fence, in
// event order, tell a life the device could have lived: ENTER and EXIT
// alternate, from outside, and a DWELL comes only while inside, once a
// stay. Those of one instant have no order of their own (a step back's
// pings may share instants with the pings before it): any that fits will
// do. It returns what is wrong, or "".
func alternates(trans []engine.Transition) string { return alternatesLate(trans, nil) }

// alternatesLate is alternates, except that a DWELL decided before the
// fix arrived that revealed an EXIT before it (the EXIT's, decided after
// the DWELL) is left out: no bounded hold can take back what it published
// before a ping came (docs/fences.md, "Accuracy-aware edges"). Nothing
// else is excused. The EXIT's fix is told by its position and arrival,
// which the transition carries as the engine kept them: not by its
// stamp, as the clock model may move a ping on the timeline (a step
// back).
func alternatesLate(trans []engine.Transition, fixes []fix) string {
	unknowable := func(dw *engine.Transition, all []engine.Transition) bool {
		for _, e := range all {
			if e.Type != engine.Exit || e.Event >= dw.Event || !e.Decided.After(dw.Decided) {
				continue
			}
			for _, f := range fixes {
				if at := t0.Add(f.arrive); (quantized(f.p) == (pos{e.Lat, e.Lon}) || f.p == (pos{e.Lat, e.Lon})) && at.Equal(e.Ingest) && !at.Before(dw.Decided) {
					return true
				}
			}
		}
		return false
	}
	type key struct{ dev, fence string }
	by := map[key][]engine.Transition{}
	for _, tr := range trans {
		k := key{tr.Device, tr.Fence}
		by[k] = append(by[k], tr)
	}
	for _, ts := range by {
		slices.SortStableFunc(ts, func(a, b engine.Transition) int { return cmp.Compare(a.Event, b.Event) })
		all := ts
		ts = slices.DeleteFunc(slices.Clone(ts), func(tr engine.Transition) bool {
			return tr.Type == engine.Dwell && unknowable(&tr, all)
		})
		inside, dwelled := false, false
		fits := func(tr *engine.Transition) bool {
			switch tr.Type {
			case engine.Enter:
				return !inside
			case engine.Exit:
				return inside
			default:
				return inside && !dwelled
			}
		}
		for len(ts) > 0 {
			i := slices.IndexFunc(ts, func(tr engine.Transition) bool { return tr.Event == ts[0].Event && fits(&tr) })
			if i < 0 {
				return fmt.Sprintf("in event order, %s (historic %v) does not follow (inside %v, dwelled %v)", line(&ts[0]), ts[0].Historic, inside, dwelled)
			}
			switch ts[i].Type {
			case engine.Enter:
				inside, dwelled = true, false
			case engine.Exit:
				inside = false
			default:
				dwelled = true
			}
			ts = slices.Delete(ts, i, i+1)
		}
	}
	return ""
}

// Fixes near one fence's edge, clear of it or within their margin, with
// some arriving seconds late, make transitions that tell in event order a
// life the device could have lived (alternates): a late fix clear of the
// edge changes the state of the fixes held after it, up to the live one,
// and the transitions it reveals neither repeat nor leave out one that
// was published. (Near where fences' edges meet:
// TestPropertyLateFixesNearSeveralEdgesAlternate.)
func TestPropertyLateFixesNearAnEdgeAlternate(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness(t, nil)
		ev := time.Duration(0)
		var fixes []fix
		for range rapid.IntRange(1, 40).Draw(t, "pings") {
			ev += ms(rapid.IntRange(200, 2000).Draw(t, "gap_ms"))
			arrive := ev + ms(rapid.SampledFrom([]int{0, 100, 300, 2500, 6000}).Draw(t, "delay_ms"))
			// Within, at and beyond the margin of fixes of ±0.5 to ±2 m,
			// and on the edge.
			m := rapid.SampledFrom([]float64{-5, -2.5, -1, 0, 1, 2.5, 5}).Draw(t, "metres")
			acc := rapid.SampledFrom([]float64{0.5, 1, 2}).Draw(t, "acc")
			fixes = append(fixes, fix{westOfDepot(m), acc, ev, arrive})
		}
		h.sendInArrivalOrder("d", fixes)
		h.at(ev + time.Hour)
		if err := alternates(h.rec.trans); err != "" {
			t.Fatalf("%s:\n%q", err, h.rec.lines())
		}
	})
}

// Fixes near the three test fences' edges, where the depot's east edge is
// the yard's west one inside the zone and their corners meet the zone's
// edges, within, at and beyond their margins, some seconds late, make
// transitions that tell in each fence, in event order, a life the device
// could have lived (alternatesLate: a DWELL published before a late fix
// revealed an earlier EXIT is the one exception, a limit of any bounded
// hold).
func TestPropertyLateFixesNearSeveralEdgesAlternate(t *testing.T) {
	lons := []float64{13.400, 13.405, 13.410, 13.415, 13.420}
	lats := []float64{52.500, 52.505, 52.510}
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness(t, nil)
		ev := time.Duration(0)
		var fixes []fix
		for range rapid.IntRange(1, 40).Draw(t, "pings") {
			ev += ms(rapid.IntRange(200, 2000).Draw(t, "gap_ms"))
			arrive := ev + ms(rapid.SampledFrom([]int{0, 0, 100, 300, 2500, 4000, 6000}).Draw(t, "delay_ms"))
			// On an edge or a corner, or off it by less or more than the
			// margin of fixes of ±0.5 to ±2 m.
			p := pos{rapid.SampledFrom(lats).Draw(t, "lat"), rapid.SampledFrom(lons).Draw(t, "lon")}
			offsets := []float64{-5, -2.5, -1, 0, 1, 2.5, 5}
			p.lat += rapid.SampledFrom(offsets).Draw(t, "north_m") / 111_195
			p.lon += rapid.SampledFrom(offsets).Draw(t, "east_m") / mPerDegLon
			acc := rapid.SampledFrom([]float64{0.5, 1, 2}).Draw(t, "acc")
			fixes = append(fixes, fix{p, acc, ev, arrive})
		}
		h.sendInArrivalOrder("d", fixes)
		h.at(ev + time.Hour)
		if err := alternatesLate(h.rec.trans, fixes); err != "" {
			t.Fatalf("%s:\n%q", err, h.rec.lines())
		}
	})
}

// moved is p moved north and east by metres.
func moved(p pos, north, east float64) pos {
	return pos{p.lat + north/111_195, p.lon + east/mPerDegLon}
}

// wantAlternatingWithoutDwell fails unless the transitions tell a life
// the device could have lived (alternates) and none is a DWELL.
func (h *harness) wantAlternatingWithoutDwell() {
	h.t.Helper()
	if err := alternates(h.rec.trans); err != "" {
		h.t.Fatalf("%s: %q", err, h.rec.lines())
	}
	for _, tr := range h.rec.trans {
		if tr.Type == engine.Dwell {
			h.t.Fatalf("a DWELL: %q", h.rec.lines())
		}
	}
}

// quantized is p as the engine keeps it (history.Quantize), as a
// transition it causes carries it.
func quantized(p pos) pos { return pos{history.Quantize(p.lat), history.Quantize(p.lon)} }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
func itoa(n int64) string   { return strconv.FormatInt(n, 10) }

// A late fix kept for another fence's sake (its zone EXIT published, its
// yard change stood for by the live EXIT after it) stays trusted as
// recorded when a later batch replays the points after it: replayed as
// held by an edge it is far from, it started the yard from outside, and
// a fix after it revealed a second ENTER and EXIT.
func TestAccuracyHysteresisKeptFixStaysKept(t *testing.T) {
	h := newHarness(t, nil)
	m := moved
	out := m(pos{52.500, 13.400}, -5, -5)
	var fixes []fix
	add := func(p pos, acc float64, e, a int) { fixes = append(fixes, fix{p, acc, ms(e), ms(a)}) }
	for _, e := range []int{200, 400, 800, 1000, 1200, 1400, 1600, 1801, 3383, 5197, 5398, 5599, 5800, 6002, 6683, 7006, 7358, 8211} {
		add(out, 0.5, e, e)
	}
	add(out, 0.5, 600, 4600)
	add(out, 0.5, 4996, 7496)
	add(out, 0.5, 6208, 10208)
	add(out, 0.5, 6419, 12419)                            // kept: the zone's EXIT
	add(m(pos{52.505, 13.410}, -5, -5), 0.5, 7757, 13757) // with the next, 6 s late: a step back
	add(out, 0.5, 8748, 14748)
	add(out, 0.5, 10600, 16600)
	add(out, 0.5, 11101, 13601)
	add(m(pos{52.500, 13.410}, 1, 1), 0.5, 11301, 11301)  // yard and zone ENTER
	add(m(pos{52.505, 13.415}, -5, 0), 0.5, 12601, 16601) // late, in the yard
	add(m(pos{52.500, 13.405}, -2.5, 0), 2, 12801, 12801) // yard EXIT, held in the zone
	h.sendInArrivalOrder("d", fixes)
	h.at(time.Hour)
	if err := alternates(h.rec.trans); err != "" {
		t.Fatalf("%s: %q", err, h.rec.lines())
	}
}
