package evaluator

import (
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
)

// Boundary tests of the clock model (clock/model.go), late-ping reconciliation
// (history.go) and the processor's placement of a judged ping: each pins
// one comparison at its exact edge, a nanosecond or one ping either side.

// learn sends n pings at p, one a second from +0s, each stamped off from
// its arrival, so that the device's clock model locks at offset off once
// n >= learnPings.
func (h *harness) learn(dev string, p pos, n int, off time.Duration) {
	for i := range n {
		at := time.Duration(i) * time.Second
		h.send(dev, p, at+off, at)
	}
}

// A ping stamped exactly at its device's watermark, but after everything
// committed, is next in event order: it is evaluated on arrival rather
// than buffered, so it leaves no hold deadline behind.
func TestPingAtWatermarkAfterCommittedIsEvaluatedAtOnce(t *testing.T) {
	// A 100 ms hold keeps the ping within the model's behind tolerance
	// (minBehind, 400 ms), so it reaches placeLive as fresh.
	h := newHarness(t, func(c *engine.Config) { c.Hold = ms(100) })
	h.learn("truck-1", inDepot, 4, 0)                        // locked at 0; +3s committed at +3.1s
	h.send("truck-1", inDepot, 4*time.Second, 4*time.Second) // buffered: watermark +3.9s
	if d := h.proc.devices["truck-1"]; d.wm != t0.Add(ms(3900)).UnixNano() || d.done != t0.Add(3*time.Second).UnixNano() {
		t.Fatalf("watermark %v, committed %v; want +3.9s, +3s", time.Unix(0, d.wm).Sub(t0), time.Unix(0, d.done).Sub(t0))
	}
	h.send("truck-1", outside, ms(3900), ms(4050)) // exactly at the watermark
	h.want("truck-1 depot ENTER +0s", "truck-1 depot EXIT +3.9s")
	if got := h.rec.trans[1].Decided; !got.Equal(t0.Add(ms(4050))) {
		t.Fatalf("EXIT decided at %v, want on arrival (+4.05s)", got.Sub(t0))
	}
	if h.proc.Deferred() != 0 || h.proc.Buffered() != 1 {
		t.Fatalf("deferred %d, buffered %d; want 0, 1 (the +4s ping)", h.proc.Deferred(), h.proc.Buffered())
	}
	h.at(ms(4100)) // the +4s ping's hold
	h.want("truck-1 depot ENTER +0s", "truck-1 depot EXIT +3.9s", "truck-1 depot ENTER +4s")
	if next, ok := h.proc.NextDeadline(); ok && next.Before(t0.Add(time.Minute)) {
		// (The depot's DWELL timer, minutes away, is armed.)
		t.Fatalf("a deadline is still armed at %v: the ping at the watermark was buffered", next.Sub(t0))
	}
}

// A ping stamped exactly at the last committed instant would rewrite what
// was committed: it is held for the late batch (history on), not
// evaluated live, even though the clock model finds it fresh.
func TestPingAtCommittedInstantIsHeldAsLate(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Hold = ms(100) })
	h.learn("truck-1", inDepot, 4, 0) // +3s committed at +3.1s: watermark = committed = +3s
	h.send("truck-1", outside, 3*time.Second, ms(3200))
	h.want("truck-1 depot ENTER +0s")
	if h.proc.Deferred() != 1 || h.proc.Buffered() != 0 {
		t.Fatalf("deferred %d, buffered %d; want the ping in the late batch", h.proc.Deferred(), h.proc.Buffered())
	}
}

// A stamp exactly the skew tolerance ahead of its device's learned clock
// is the device's own; one nanosecond more is a glitch, clamped to the
// model's clock (the device runs 3 s ahead of the server, so the stamp is
// ahead of the server too).
func TestStampExactlySkewAheadOfLearnedClockIsFresh(t *testing.T) {
	const off = 3 * time.Second
	for _, tc := range []struct {
		name    string
		extra   time.Duration
		want    string
		clamp   clock.ClampReason
		clamped uint64
	}{
		{"at the skew", 0, "truck-1 depot ENTER +9s", clock.ClampNone, 0},
		{"one ns beyond", 1, "truck-1 depot ENTER +7s", clock.ClampAhead, 1}, // the model's clock: +4s + 3s
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.learn("truck-1", outside, 4, off)
			h.send("truck-1", inDepot, 4*time.Second+off+engine.DefaultSkew+tc.extra, 4*time.Second)
			h.at(10 * time.Second)
			h.want(tc.want)
			if c := h.rec.trans[0].Clamp; c != tc.clamp {
				t.Fatalf("clamp = %q, want %q", c, tc.clamp)
			}
			if n := h.m.Clamped[clock.ClampAhead].Get(); n != tc.clamped {
				t.Fatalf("clamped ahead = %d, want %d", n, tc.clamped)
			}
		})
	}
}

// A stamp exactly the behind tolerance, max(minBehind, hold), behind its
// device's learned clock is fresh and buffered; one nanosecond more is
// behind the model: with the history on it waits in the late batch until
// the next pings tell a delay from a backward step.
func TestStampExactlyBehindToleranceIsFresh(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold time.Duration
		tol  time.Duration
	}{
		{"the hold is longer", engine.DefaultHold, engine.DefaultHold},
		{"minBehind is longer", ms(100), clock.MinBehind},
	} {
		for _, beyond := range []bool{false, true} {
			name := tc.name + "/at the tolerance"
			extra := time.Duration(0)
			if beyond {
				name, extra = tc.name+"/one ns beyond", 1
			}
			t.Run(name, func(t *testing.T) {
				h := newHarness(t, func(c *engine.Config) { c.Hold = tc.hold })
				h.learn("truck-1", outside, 4, 0) // locked at 0; all committed by +4s
				h.send("truck-1", inDepot, 4*time.Second-tc.tol-extra, 4*time.Second)
				wantDeferred, wantBuffered := 0, 1
				if beyond {
					wantDeferred, wantBuffered = 1, 0
				}
				if d, b := h.proc.Deferred(), h.proc.Buffered(); d != wantDeferred || b != wantBuffered {
					t.Fatalf("deferred %d, buffered %d; want %d, %d", d, b, wantDeferred, wantBuffered)
				}
			})
		}
	}
}

// A backward step of a second or more is confirmed by the third
// consistent behind ping, not the second; a step under a second needs
// six, not five. Here the steps are exactly 1 s and 1 s − 1 ns.
func TestBackwardStepConfirmationCounts(t *testing.T) {
	for _, tc := range []struct {
		name  string
		step  time.Duration
		pings int
	}{
		{"a second", time.Second, 3},
		{"just under a second", time.Second - 1, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.learn("truck-1", outside, 4, 0) // locked at 0
			for i := range tc.pings {
				// A second apart (well over burstGap), all equally behind
				// (within stepBand of each other); off the committed
				// stamps, so none is taken for a redelivered copy.
				at := 4*time.Second + ms(250) + time.Duration(i)*time.Second
				h.send("truck-1", outside, at-tc.step, at)
				want := uint64(0)
				if i == tc.pings-1 {
					want = 1
				}
				if got := h.m.Steps.Get(); got != want {
					t.Fatalf("after behind ping %d: steps = %d, want %d", i+1, got, want)
				}
			}
		})
	}
}

// With HistoryPoints = 4 a device's history keeps its last four committed
// pings: a late ping stamped between the oldest two is reconciled (its
// EXIT and ENTER are published as historic), one stamped before the oldest
// goes to the late output as before the history.
func TestHistoryKeepsExactlyHistoryPoints(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stamp time.Duration
		want  []string
		late  int
	}{
		{"between the oldest two kept", ms(2500),
			[]string{"truck-1 depot ENTER +0s", "truck-1 depot EXIT +2.5s", "truck-1 depot ENTER +3s"}, 0},
		{"before the oldest kept", ms(1500),
			[]string{"truck-1 depot ENTER +0s"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(c *engine.Config) { c.HistoryPoints = 4 })
			h.learn("truck-1", inDepot, 6, 0) // +0s … +5s, all committed by +6s: +2s … +5s kept
			h.send("truck-1", outside, tc.stamp, 6*time.Second)
			h.at(time.Minute) // whenever its batch is reconciled
			h.want(tc.want...)
			if len(h.rec.late) != tc.late || h.m.Reconciled.Get() != uint64(1-tc.late) {
				t.Fatalf("late = %d, reconciled = %d; want %d, %d", len(h.rec.late), h.m.Reconciled.Get(), tc.late, 1-tc.late)
			}
			if tc.late == 1 {
				if l := h.rec.late[0]; l.Reason != engine.LateBeforeHistory || l.Ping.Event != t0.Add(tc.stamp).UnixNano() {
					t.Fatalf("late = %v at %v, want before_history at +%v", l.Reason, time.Unix(0, l.Ping.Event).Sub(t0), tc.stamp)
				}
			}
		})
	}
}

// A device that keeps sending the odd late ping, every 2 s (never
// HistoryWait apart), does not keep its batch open for ever: it is
// reconciled at exactly its first ping's arrival + 4 × HistoryWait, not a
// nanosecond before. That holds for delayed pings too far apart to tell a
// backward step (one is "being told" all along). (Redelivered copies of
// recent pings never get there: TestRedeliveredCopiesAreDropped.)
func TestLateBatchReconciledAtFirstPlusFourWaits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stamps []time.Duration // of the late pings, arriving +6s, +8s, … +16s
		candN  int             // the clock's step candidate at the cap
	}{
		// Behind the model by about 4.75, 3.25, 8.75, 7.25, 12.75, 11.25 s:
		// each more than stepBand from the one before, so none confirms.
		{"delayed pings telling no step", []time.Duration{ms(1250), ms(4750), ms(1260), ms(4760), ms(1270), ms(4770)}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.learn("truck-1", inDepot, 6, 0) // +0s … +5s, all committed by +6s
			first := 6 * time.Second
			for i, stamp := range tc.stamps {
				h.send("truck-1", inDepot, stamp, first+time.Duration(2*i)*time.Second)
			}
			d := h.proc.devices["truck-1"]
			if d.clk.Pending() != tc.candN || d.clk.Shift() != 0 {
				t.Fatalf("step candidate %d, shift %v; want %d, 0", d.clk.Pending(), time.Duration(d.clk.Shift()), tc.candN)
			}
			// The last came at +16s: at the cap (+18s) the batch has
			// waited only 2 s since, less than HistoryWait.
			due := first + 4*engine.DefaultHistoryWait
			h.at(due - 1)
			if got := h.proc.Deferred(); got != len(tc.stamps) {
				t.Fatalf("deferred = %d one ns before first + 4 waits, want %d", got, len(tc.stamps))
			}
			// Were the batch not due at the cap, Advance would re-arm its
			// timer at that same instant and never return: fail instead.
			if !d.lateDue(int64(due), int64(h.proc.cfg.HistoryWait)) {
				t.Fatal("the late batch is not due at first + 4 waits")
			}
			h.at(due)
			if got, n := h.proc.Deferred(), h.m.Reconciled.Get(); got != 0 || n != uint64(len(tc.stamps)) {
				t.Fatalf("at first + 4 waits: deferred = %d, reconciled = %d; want 0, %d", got, n, len(tc.stamps))
			}
			h.want("truck-1 depot ENTER +0s") // all inside: nothing new
		})
	}
}

// After Restore(e), a ping stamped exactly e would rewrite the restored
// transition: it is late (held for the late batch, and with no history to
// place it in, sent to the late output). One stamped e + 1 ns is
// evaluated: its EXIT is published.
func TestRestoreBoundaryIsTheRestoredInstant(t *testing.T) {
	e := t0.UnixNano()
	t.Run("at the restored instant", func(t *testing.T) {
		h := newHarness(t, nil)
		h.proc.Restore("truck-1", "depot", engine.Enter, e)
		h.sendStamp("truck-1", outside, e, true, ms(100))
		if h.proc.Deferred() != 1 || h.proc.Buffered() != 0 {
			t.Fatalf("deferred %d, buffered %d; want the ping in the late batch", h.proc.Deferred(), h.proc.Buffered())
		}
		h.at(10 * time.Second)
		h.want()
		if len(h.rec.late) != 1 || h.rec.late[0].Reason != engine.LateBeforeHistory {
			t.Fatalf("late = %+v, want the ping before the history", h.rec.late)
		}
	})
	t.Run("one ns after", func(t *testing.T) {
		h := newHarness(t, nil)
		h.proc.Restore("truck-1", "depot", engine.Enter, e)
		h.sendStamp("truck-1", outside, e+1, true, ms(100))
		if h.proc.Deferred() != 0 || h.proc.Buffered() != 1 {
			t.Fatalf("deferred %d, buffered %d; want the ping buffered", h.proc.Deferred(), h.proc.Buffered())
		}
		h.at(10 * time.Second)
		h.want("truck-1 depot EXIT +1ns")
		if len(h.rec.late) != 0 {
			t.Fatalf("late = %+v, want none", h.rec.late)
		}
	})
}

// A QoS 1 redelivery of one of a device's last pings (the same stamp and
// position) is dropped at once and counted: it teaches the clock nothing
// and waits in no batch. A ping at the same instant but elsewhere is not
// a copy.
func TestRedeliveredCopiesAreDropped(t *testing.T) {
	h := newHarness(t, nil)
	h.learn("truck-1", inDepot, 6, 0) // +0s … +5s, all committed by +6s
	for i, stamp := range []time.Duration{ms(1000), ms(2000), ms(3000), ms(4000), ms(1000), ms(5000)} {
		h.send("truck-1", inDepot, stamp, 6*time.Second+time.Duration(2*i)*time.Second)
	}
	if got, n := h.proc.Deferred(), h.m.Copies.Get(); got != 0 || n != 6 {
		t.Fatalf("deferred %d, copies dropped %d; want 0 and 6", got, n)
	}
	h.send("truck-1", outside, ms(5000), 20*time.Second)
	if got, n := h.proc.Deferred(), h.m.Copies.Get(); got != 1 || n != 6 {
		t.Fatalf("a ping at a recent instant elsewhere: deferred %d, copies %d; want it late, not a copy", got, n)
	}
	h.at(time.Minute)
	h.want("truck-1 depot ENTER +0s", "truck-1 depot EXIT +5s")
}
