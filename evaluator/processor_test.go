package evaluator

import (
	"math"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
)

func TestDelayedInsidePingAfterLaterOutsidePingYieldsNoPhantom(t *testing.T) {
	for _, tc := range []struct {
		name      string
		hold      time.Duration
		want      []string
		reversals uint64
	}{
		{"event time with the default hold", engine.DefaultHold,
			[]string{"truck-1 depot ENTER +0s", "truck-1 depot EXIT +1.1s"}, 0},
		// The baseline shows the test can fail: arrival order invents an ENTER.
		{"arrival order", 0,
			// Two reversals: the EXIT undid the ENTER, the ENTER undid the EXIT.
			[]string{"truck-1 depot ENTER +0s", "truck-1 depot EXIT +1.1s", "truck-1 depot ENTER +1s"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *engine.Config) { c.Hold = tc.hold })
			h.send("truck-1", inDepot, 0, 0)
			h.send("truck-1", outside, ms(1100), ms(1150))
			h.send("truck-1", inDepot, ms(1000), ms(1300)) // delayed 300 ms by the network
			h.at(3 * time.Second)
			h.want(tc.want...)
			if got := h.m.Reversals.Get(); got != tc.reversals {
				t.Fatalf("reversals = %d, want %d", got, tc.reversals)
			}
			if len(h.rec.late) != 0 {
				t.Fatalf("late = %v, want none", h.rec.late)
			}
		})
	}
}

// A ping behind the watermark but after everything committed is next in
// event order: it is evaluated at once, not sent away.
func TestPingBehindWatermarkAfterEverythingCommittedIsEvaluated(t *testing.T) {
	h := newHarness(t, nil)
	h.send("truck-1", inDepot, 0, 0)
	h.send("truck-1", inDepot, ms(2000), ms(2000))
	h.send("truck-1", outside, ms(1000), ms(2100)) // 1.1 s late, more than the hold
	h.at(5 * time.Second)
	h.want("truck-1 depot ENTER +0s", "truck-1 depot EXIT +1s", "truck-1 depot ENTER +2s")
	if len(h.rec.late) != 0 || h.m.Reconciled.Get() != 0 {
		t.Fatalf("late = %d, reconciled = %d; want the ping evaluated live", len(h.rec.late), h.m.Reconciled.Get())
	}
}

// With the history off, a ping stamped at or before what its device
// committed goes to the late output as it comes.
func TestPingBeforeCommittedGoesToLateOutputWithoutHistory(t *testing.T) {
	h := newHarness(t, noHistory)
	h.send("truck-1", inDepot, 0, 0)
	h.send("truck-1", inDepot, ms(2000), ms(2000))
	h.at(ms(2600)) // +2s released by its hold: committed
	h.send("truck-1", outside, ms(1000), ms(2700))
	h.at(5 * time.Second)
	h.want("truck-1 depot ENTER +0s")
	if len(h.rec.late) != 1 {
		t.Fatalf("late = %d pings, want 1", len(h.rec.late))
	}
	l := h.rec.late[0]
	if l.Reason != engine.LateBehindWatermark || l.Ping.Event != t0.Add(ms(1000)).UnixNano() || l.Watermark != t0.Add(ms(2000)).UnixNano() {
		t.Fatalf("late = %+v, want the 1 s ping behind watermark +2s", l)
	}
	if h.m.Late.Get() != 1 {
		t.Fatalf("late counter = %d, want 1", h.m.Late.Get())
	}
}

// With the history on, the same ping is placed between the committed
// pings around it: the EXIT and ENTER it reveals are published as
// historic; the current state stays inside, in a stay that began at the
// revealed ENTER.
func TestPingBeforeCommittedIsReconciledIntoHistory(t *testing.T) {
	h := newHarness(t, nil)
	h.send("truck-1", inDepot, 0, 0)
	h.send("truck-1", inDepot, ms(2000), ms(2000))
	h.at(ms(2600))
	h.send("truck-1", outside, ms(1000), ms(2700))
	h.at(ms(2700) + engine.DefaultHistoryWait - 1)
	h.want("truck-1 depot ENTER +0s")
	h.at(ms(2700) + engine.DefaultHistoryWait)
	h.want("truck-1 depot ENTER +0s", "truck-1 depot EXIT +1s", "truck-1 depot ENTER +2s")
	for _, tr := range h.rec.trans[1:] {
		if !tr.Historic {
			t.Fatalf("%s is not historic", line(&tr))
		}
	}
	if len(h.rec.late) != 0 || h.m.Reconciled.Get() != 1 || h.m.Historic[engine.Exit].Get() != 1 {
		t.Fatalf("late = %d, reconciled = %d, historic EXITs = %d", len(h.rec.late), h.m.Reconciled.Get(), h.m.Historic[engine.Exit].Get())
	}
	// The stay under way began at the revealed ENTER: its DWELL counts from there.
	if d := h.proc.devices["truck-1"]; !d.states[0].Inside || d.states[0].Enter != t0.Add(2*time.Second).UnixNano() {
		t.Fatalf("state = %+v, want inside since +2s", d.states)
	}
}

func TestSilentDeviceCommitsAfterExactlyTheHold(t *testing.T) {
	h := newHarness(t, nil)
	h.send("parked", inDepot, 0, ms(20))
	h.at(ms(519))
	h.want()
	h.at(ms(520))
	h.want("parked depot ENTER +0s")
	if d := h.rec.trans[0].Decided; !d.Equal(t0.Add(ms(520))) {
		t.Fatalf("decided at %v, want +520ms: the hold after arrival", d.Sub(t0))
	}
	if got := h.proc.Buffered(); got != 0 {
		t.Fatalf("buffered = %d after release", got)
	}
}

func TestNextDeadlineIsTheHoldAfterArrival(t *testing.T) {
	h := newHarness(t, nil)
	h.send("parked", inDepot, 0, ms(20))
	next, ok := h.proc.NextDeadline()
	if !ok || !next.Equal(t0.Add(ms(520))) {
		t.Fatalf("next deadline = %v %v, want +520ms", next.Sub(t0), ok)
	}
}

func TestReleaseOnDeadlineMovesWatermark(t *testing.T) {
	h := newHarness(t, noHistory)
	h.send("truck-1", inDepot, ms(1000), ms(1000))
	h.at(ms(1500)) // released by its deadline: watermark now +1s, not +0.5s
	h.send("truck-1", outside, ms(900), ms(1600))
	h.want("truck-1 depot ENTER +1s")
	if len(h.rec.late) != 1 {
		t.Fatalf("late = %d, want the +0.9s ping late", len(h.rec.late))
	}
}

func TestDeviceClockBehindServerIsNotLate(t *testing.T) {
	h := newHarness(t, nil)
	// The device's clock runs 30 s behind the server's: nothing is late just
	// for that, because the watermark follows the device's own clock.
	for i := range 10 {
		p := inDepot
		if i >= 5 {
			p = outside
		}
		h.send("slow-clock", p, ms(i*1000-30000), ms(i*1000))
	}
	h.at(20 * time.Second)
	h.want("slow-clock depot ENTER -30s", "slow-clock depot EXIT -25s")
	if len(h.rec.late) != 0 || h.rec.trans[0].Clamp != clock.ClampNone {
		t.Fatalf("late = %d, clamp = %v; want none", len(h.rec.late), h.rec.trans[0].Clamp)
	}
}

func TestStoreAndForwardBacklogOldestFirstIsEvaluated(t *testing.T) {
	h := newHarness(t, nil)
	// Ten minutes out of coverage, then the backlog arrives in a burst.
	for i := range 20 {
		p := inDepot
		if i >= 12 {
			p = outside
		}
		h.send("truck-1", p, ms(i*1000-600000), ms(i))
	}
	h.at(time.Second)
	h.want("truck-1 depot ENTER -10m0s", "truck-1 depot EXIT -9m48s")
	if len(h.rec.late) != 0 {
		t.Fatalf("late = %d, want none", len(h.rec.late))
	}
}

func TestBufferOverflowReleasesOldestInOrder(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.BufferCap = 4 })
	// A 10 Hz burst, shuffled by the network, all within the hold.
	for i, ev := range []int{300, 100, 200, 0, 400, 600, 500, 700, 900, 800} {
		p := inDepot
		if ev >= 500 {
			p = outside
		}
		h.send("truck-1", p, ms(ev), ms(1000+i))
		if n := len(h.proc.devices["truck-1"].buf); n > 4 {
			t.Fatalf("buffer holds %d pings, cap is 4", n)
		}
	}
	h.at(2 * time.Second)
	h.want("truck-1 depot ENTER +0s", "truck-1 depot EXIT +500ms")
	if len(h.rec.late) != 0 {
		t.Fatalf("late = %d, want none: overflow releases, it does not shed", len(h.rec.late))
	}
	if got := h.m.Overflow.Get(); got != 4 {
		t.Fatalf("overflow = %d, want 4", got)
	}
	if got := h.m.Released.Get(); got != 10 {
		t.Fatalf("released = %d, want all 10", got)
	}
}

func TestClampedFutureStampDoesNotMakeLaterPingsLate(t *testing.T) {
	h := newHarness(t, nil)
	h.send("truck-1", inDepot, time.Hour, 0) // clock jumped an hour ahead
	h.send("truck-1", inDepot, ms(600), ms(600))
	h.send("truck-1", outside, ms(1200), ms(1200))
	h.at(3 * time.Second)
	h.want("truck-1 depot ENTER +0s", "truck-1 depot EXIT +1.2s")
	if c := h.rec.trans[0].Clamp; c != clock.ClampFuture {
		t.Fatalf("ENTER clamp = %v, want future", c)
	}
	if len(h.rec.late) != 0 {
		t.Fatalf("late = %d, want none", len(h.rec.late))
	}
}

// A device whose clock runs ahead is ordered by its own stamps; a glitch
// ahead of its learned clock is clamped to that clock and moves nothing.
func TestGlitchAheadOfTheDeviceClockIsClampedToIt(t *testing.T) {
	h := newHarness(t, nil)
	for i := range 5 { // learn a clock 1.5 s ahead of the server
		h.send("truck-1", outside, ms(1500+200*i), ms(200*i))
	}
	h.send("truck-1", inDepot, ms(1500+1000)+5*time.Second, ms(1000)) // 5 s ahead of its clock
	h.send("truck-1", outside, ms(1500+1200), ms(1200))
	h.at(3 * time.Second)
	h.want("truck-1 depot ENTER +2.5s", "truck-1 depot EXIT +2.7s")
	if c := h.rec.trans[0].Clamp; c != clock.ClampAhead {
		t.Fatalf("ENTER clamp = %v, want ahead", c)
	}
	if d := h.proc.devices["truck-1"]; d.high > t0.Add(ms(1500+1200)+engine.DefaultSkew).UnixNano() {
		t.Fatalf("high-water = %v: the glitch raised it", time.Unix(0, d.high).Sub(t0))
	}
}

func TestColdBootEpochZeroIsClampedAndFlagged(t *testing.T) {
	h := newHarness(t, nil)
	h.sendStamp("truck-1", inDepot, 0, true, ms(50))
	h.sendStamp("truck-1", outside, 0, false, ms(1050))
	h.at(3 * time.Second)
	h.want("truck-1 depot ENTER +50ms", "truck-1 depot EXIT +1.05s")
	if a, b := h.rec.trans[0].Clamp, h.rec.trans[1].Clamp; a != clock.ClampBeforeFloor || b != clock.ClampMissing {
		t.Fatalf("clamps = %v, %v; want before_floor, missing", a, b)
	}
}

func TestClamperStamp(t *testing.T) {
	c := engine.DefaultConfig().Clamper()
	wall := t0.UnixNano()
	ns := func(d time.Duration) int64 { return wall + int64(d) }
	for _, tc := range []struct {
		name   string
		ts     int64
		hasTs  bool
		want   int64
		reason clock.ClampReason
	}{
		{"good stamp", ns(-ms(300)), true, ns(-ms(300)), clock.ClampNone},
		{"no stamp", 0, false, wall, clock.ClampMissing},
		{"epoch zero after a cold boot", 0, true, wall, clock.ClampBeforeFloor},
		{"1980 GPS epoch", time.Date(1980, 1, 6, 0, 0, 0, 0, time.UTC).UnixNano(), true, wall, clock.ClampBeforeFloor},
		{"just before the floor", engine.DefaultMinValidTime.UnixNano() - 1, true, wall, clock.ClampBeforeFloor},
		{"at the floor (an ancient backlog, not clamped)", engine.DefaultMinValidTime.UnixNano(), true, engine.DefaultMinValidTime.UnixNano(), clock.ClampNone},
		{"an hour old backlog", ns(-time.Hour), true, ns(-time.Hour), clock.ClampNone},
		{"ahead by seconds: the device's model judges it", ns(ms(2001)), true, ns(ms(2001)), clock.ClampNone},
		{"ahead by the largest clock offset exactly", ns(engine.DefaultMaxClockOffset), true, ns(engine.DefaultMaxClockOffset), clock.ClampNone},
		{"ahead beyond the largest clock offset", ns(engine.DefaultMaxClockOffset + 1), true, wall, clock.ClampFuture},
		{"year 2040", time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(), true, wall, clock.ClampFuture},
		{"saturated far future", 1<<63 - 1, true, wall, clock.ClampFuture},
		{"saturated far past", -1 << 63, true, wall, clock.ClampBeforeFloor},
		{"GPS week rollover", ns(ms(250) - clock.WeekRollover), true, ns(ms(250)), clock.ClampWeekRollover},
		{"GPS week rollover, behind by the skew", ns(-ms(2000) - clock.WeekRollover), true, ns(-ms(2000)), clock.ClampWeekRollover},
		{"rollover distance but beyond the skew", ns(-ms(2001) - clock.WeekRollover), true, wall, clock.ClampBeforeFloor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, reason := c.Stamp(tc.ts, tc.hasTs, wall)
			if got != tc.want || reason != tc.reason {
				t.Fatalf("Stamp = %v %q, want %v %q", time.Unix(0, got).Sub(t0), reason, time.Unix(0, tc.want).Sub(t0), tc.reason)
			}
		})
	}
}

func TestDwellConfirmedByPingFiresOnce(t *testing.T) {
	h := newHarness(t, nil)
	for i := range 6 {
		h.send("truck-1", inDepotZ, ms(i*1000), ms(i*1000))
	}
	h.at(10 * time.Second)
	h.want("truck-1 depot ENTER +0s", "truck-1 zone ENTER +0s", "truck-1 zone DWELL +3s")
	if h.rec.trans[2].Timer {
		t.Fatal("DWELL confirmed by a ping is marked as fired by the timer")
	}
}

// A silent parked device's DWELL timer fires when its estimated clock has
// passed the DWELL's instant by the hold, at that instant whoever sweeps
// when: it is a deadline of its own.
func TestDwellFiresForSilentParkedDevice(t *testing.T) {
	h := newHarness(t, nil)
	h.send("parked", inDepotZ, 0, 0)
	h.at(ms(600))
	h.proc.Sweep(t0.Add(ms(3000)))
	h.at(ms(3499))
	h.want("parked depot ENTER +0s", "parked zone ENTER +0s")
	if next, ok := h.proc.NextDeadline(); !ok || !next.Equal(t0.Add(ms(3500))) {
		t.Fatalf("next deadline %v (%v), want the DWELL's at +3.5s", next.Sub(t0), ok)
	}
	h.at(ms(3700)) // a plain Advance past it decides it then
	h.want("parked depot ENTER +0s", "parked zone ENTER +0s", "parked zone DWELL +3s")
	if tr := h.rec.trans[2]; !tr.Timer || math.Abs(tr.Lat-inDepotZ.lat) > 1e-5 || !tr.Decided.Equal(t0.Add(ms(3700))) {
		t.Fatalf("DWELL = %+v, want a timer DWELL at the parked position decided at +3.7s", tr)
	}
	// The device's clock passed +3s: a ping stamped before it, delayed
	// past its hold, comes out after the DWELL, once its late batch is
	// reconciled: the newest news of the device, so its EXIT is live.
	h.send("parked", outside, ms(2900), ms(3800))
	h.at(ms(3800) + engine.DefaultHistoryWait)
	h.want("parked depot ENTER +0s", "parked zone ENTER +0s", "parked zone DWELL +3s", "parked depot EXIT +2.9s", "parked zone EXIT +2.9s")
	if len(h.rec.late) != 0 || h.rec.trans[3].Historic {
		t.Fatalf("late = %d, EXIT %+v; want a live EXIT", len(h.rec.late), h.rec.trans[3])
	}
}

func TestNoDwellAfterLeaving(t *testing.T) {
	h := newHarness(t, nil)
	h.send("truck-1", inDepotZ, 0, 0)
	h.send("truck-1", inDepotZ, ms(1000), ms(1000))
	h.send("truck-1", outside, ms(2000), ms(2000))
	h.at(ms(2600))
	h.proc.Sweep(t0.Add(10 * time.Second))
	h.send("truck-1", outside, ms(11000), ms(11000))
	h.at(12 * time.Second)
	h.want("truck-1 depot ENTER +0s", "truck-1 zone ENTER +0s", "truck-1 depot EXIT +2s", "truck-1 zone EXIT +2s")
}

func TestMovingBetweenFencesExitsBeforeEntering(t *testing.T) {
	h := newHarness(t, nil)
	h.send("truck-1", inDepot, 0, 0)
	h.send("truck-1", inYard, ms(1000), ms(1000))
	h.at(2 * time.Second)
	h.want("truck-1 depot ENTER +0s", "truck-1 depot EXIT +1s", "truck-1 yard ENTER +1s")
}

func TestOverlappingFencesAreIndependent(t *testing.T) {
	h := newHarness(t, nil)
	for i, p := range []pos{inDepot, inDepotZ, inYardZ, inYard, outside} {
		h.send("truck-1", p, ms(i*1000), ms(i*1000))
	}
	h.at(6 * time.Second)
	h.want("truck-1 depot ENTER +0s", "truck-1 zone ENTER +1s", "truck-1 depot EXIT +2s",
		"truck-1 yard ENTER +2s", "truck-1 zone EXIT +3s", "truck-1 yard EXIT +4s")
}

func TestRestoredStateSuppressesDuplicateEnter(t *testing.T) {
	h := newHarness(t, nil)
	h.proc.Restore("truck-1", "depot", engine.Enter, t0.Add(-time.Minute).UnixNano())
	h.proc.Restore("truck-2", "depot", engine.Enter, t0.Add(-time.Minute).UnixNano())
	h.send("truck-1", inDepot, 0, 0)
	h.send("truck-1", outside, ms(1000), ms(1000))
	// truck-2 left while the broker was down: its first ping exits.
	h.send("truck-2", anotherOut, ms(100), ms(100))
	// A ping stamped before the restored transition would rewrite it.
	h.send("truck-1", outside, -2*time.Minute, ms(1100))
	h.at(5 * time.Second)
	h.want("truck-2 depot EXIT +100ms", "truck-1 depot EXIT +1s")
	if len(h.rec.late) != 1 {
		t.Fatalf("late = %d, want the ping stamped before the restored ENTER", len(h.rec.late))
	}
}

func TestFirstSeenInsideEnters(t *testing.T) {
	h := newHarness(t, nil)
	h.send("new", inYard, 0, 0)
	h.at(time.Second)
	h.want("new yard ENTER +0s")
}

func TestIdleEvictionKeepsFenceState(t *testing.T) {
	h := newHarness(t, nil)
	h.send("inside", inDepot, 0, 0)
	h.send("outside", outside, 0, 0)
	h.at(time.Second)
	h.proc.Sweep(t0.Add(5 * time.Minute))
	if n := h.proc.Devices(); n != 2 {
		t.Fatalf("devices = %d before the idle timeout, want 2", n)
	}
	h.proc.Sweep(t0.Add(engine.DefaultIdleTimeout + time.Second))
	if n := h.proc.Devices(); n != 1 {
		t.Fatalf("devices = %d after the idle timeout, want 1 (the one inside a fence)", n)
	}
	if d := h.proc.devices["inside"]; d.buf != nil {
		t.Fatal("evicted device still holds its buffer")
	}
	h.send("inside", inDepot, 16*time.Minute, 16*time.Minute)
	h.send("outside", inDepot, 16*time.Minute, 16*time.Minute)
	h.at(17 * time.Minute)
	// The 5-minute default DWELL fired on the sweep while parked; the return
	// after eviction brings no second ENTER.
	h.want("inside depot ENTER +0s", "inside depot DWELL +5m0s", "outside depot ENTER +16m0s")
	if h.m.Evicted.Get() != 1 {
		t.Fatalf("evicted = %d, want 1", h.m.Evicted.Get())
	}
}

func TestPerDeviceHold(t *testing.T) {
	h := newHarness(t, nil)
	h.proc.SetHold("shaky", 2*time.Second)
	h.send("shaky", inDepot, 0, 0)
	h.send("steady", inDepot, 0, 0)
	h.at(ms(1999))
	h.want("steady depot ENTER +0s")
	h.at(ms(2000))
	h.want("steady depot ENTER +0s", "shaky depot ENTER +0s")
}

// A hold changed while pings wait applies to them: widened, they wait the
// new hold; narrowed, they go at the new deadline, not the old one.
func TestHoldChangedWhilePingsWait(t *testing.T) {
	h := newHarness(t, nil) // 500 ms
	h.send("widened", inDepot, 0, 0)
	h.send("narrowed", inDepot, 0, 0)
	h.proc.SetHold("widened", 2*time.Second)
	h.proc.SetHold("narrowed", 100*time.Millisecond)
	h.at(ms(99))
	h.want()
	h.at(ms(100))
	h.want("narrowed depot ENTER +0s")
	h.at(ms(1999))
	h.want("narrowed depot ENTER +0s")
	h.at(ms(2000))
	h.want("narrowed depot ENTER +0s", "widened depot ENTER +0s")
}

func TestFenceSwapReevaluatesAtNextPing(t *testing.T) {
	h := newHarness(t, nil)
	h.send("truck-1", inDepot, 0, 0)
	h.send("parked", outside, 0, 0)
	h.at(time.Second)
	// depot is gone; a new fence covers where "parked" stands.
	h.set = mustFences(t, `{"type":"FeatureCollection","features":[
	 {"type":"Feature","id":"north","geometry":{"type":"Polygon","coordinates":[[[13.40,52.515],[13.41,52.515],[13.41,52.525],[13.40,52.525],[13.40,52.515]]]}}]}`)
	h.send("truck-1", inDepot, ms(2000), ms(2000))
	h.send("parked", outside, ms(2000), ms(2000))
	h.at(3 * time.Second)
	h.want("truck-1 depot ENTER +0s", "truck-1 depot EXIT +2s", "parked north ENTER +2s")
}

func TestForgetDropsDeviceAndItsBuffer(t *testing.T) {
	h := newHarness(t, nil)
	h.send("gone", inDepot, 0, 0)
	h.proc.Forget("gone")
	h.at(time.Second)
	if h.proc.Devices() != 0 || h.proc.Buffered() != 0 || len(h.rec.trans) != 0 {
		t.Fatalf("after Forget: %d devices, %d buffered, %q", h.proc.Devices(), h.proc.Buffered(), h.rec.lines())
	}
}

func TestFlushReleasesEverything(t *testing.T) {
	h := newHarness(t, nil)
	h.send("a", inDepot, 0, 0)
	h.send("b", inYard, 0, 0)
	h.proc.Flush(t0.Add(ms(10)))
	if len(h.rec.trans) != 2 || h.proc.Buffered() != 0 {
		t.Fatalf("after flush: %q, %d buffered", h.rec.lines(), h.proc.Buffered())
	}
}

func TestRemovedFenceExitsAtOnceAndKeptFencesKeepState(t *testing.T) {
	h := newHarness(t, nil)
	h.send("truck-1", inDepotZ, 0, 0) // inside depot and zone
	h.send("outside", outside, 0, 0)
	h.at(ms(600))
	// A reload drops depot and keeps zone (same id, same geometry).
	h.set = mustFences(t, `{"type":"FeatureCollection","features":[
	 {"type":"Feature","id":"zone","properties":{"dwell":3},"geometry":{"type":"Polygon","coordinates":[[[13.405,52.500],[13.415,52.500],[13.415,52.510],[13.405,52.510],[13.405,52.500]]]}}]}`)
	h.proc.Reconcile(t0.Add(ms(1000)))
	h.want("truck-1 depot ENTER +0s", "truck-1 zone ENTER +0s", "truck-1 depot EXIT +1s")
	if tr := h.rec.trans[2]; tr.Reason != engine.ReasonFenceRemoved || !tr.Timer {
		t.Fatalf("EXIT = %+v, want reason fence_removed", tr)
	}
	// Its next ping changes nothing: no second EXIT, no new ENTER for zone.
	h.send("truck-1", inDepotZ, ms(1500), ms(1500))
	h.at(3 * time.Second)
	h.want("truck-1 depot ENTER +0s", "truck-1 zone ENTER +0s", "truck-1 depot EXIT +1s")
}
