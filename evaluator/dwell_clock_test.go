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

// stayWithStep sends one device's stay in depot and zone (dwell 3 s)
// from true +6 s, a ping every 500 ms of true time until lastIn, then
// one outside; its clock is the server's (no transport delay) until true
// +7 s, when it steps by step.
func stayWithStep(h *harness, step, lastIn time.Duration) {
	stamp := func(at time.Duration) time.Duration {
		if at >= 7*time.Second {
			return at + step
		}
		return at
	}
	for at := time.Second; at <= 5*time.Second; at += time.Second {
		h.send("dev", outside, stamp(at), at) // the model learns the clock
	}
	at := 6 * time.Second
	for ; at <= lastIn; at += ms(500) {
		h.send("dev", inDepotZ, stamp(at), at)
	}
	h.send("dev", outside, stamp(at), at)
	h.at(at + time.Minute)
}

// A clock that steps forward by less than the skew tolerance during a
// stay (a cellular resync) makes the stay look longer on the device's
// stamps: measured there, a stay of 2.5 s got the DWELL of a 3 s dwell.
// A stay is measured in true elapsed time, its stamps corrected by the
// clock model (the step the offset absorbed): that stay gets none, and
// one of 3.5 s gets its DWELL at its true instant, 3 s after the ENTER
// on the server's clock (its stamp minus the offset it is published
// with).
func TestDwellIsMeasuredInTrueElapsedTimeAcrossAForwardStep(t *testing.T) {
	h := newHarness(t, nil)
	stayWithStep(h, ms(1500), ms(8500)) // inside from +6 s to +8.5 s, true time
	h.want("dev depot ENTER +6s", "dev zone ENTER +6s", "dev depot EXIT +10.5s", "dev zone EXIT +10.5s")

	h = newHarness(t, nil)
	stayWithStep(h, ms(1500), ms(9500)) // from +6 s to +9.5 s
	h.want("dev depot ENTER +6s", "dev zone ENTER +6s", "dev zone DWELL +10.5s", "dev depot EXIT +11.5s", "dev zone EXIT +11.5s")
	dw := h.rec.trans[2]
	if server := time.Unix(0, dw.Stamp-dw.Offset); !server.Equal(t0.Add(9 * time.Second)) {
		t.Fatalf("DWELL on the server's clock at %v, want +9s, 3 s after the ENTER", server.Sub(t0))
	}
}

// stepUncertainty is how far the clock model may misplace an instant
// after a step, beyond the transport delays it learns from: a step back
// within the hold (500 ms) is a delayed ping to it, and its offset
// settles within its noise (250 ms) of the fastest ping's.
const stepUncertainty = 750 * time.Millisecond

// A device whose clock steps once, forward or back by up to 5 s, during a
// stay in depot (dwell 10 s) and zone (3 s), with transport delays of up
// to maxDelay and at least 8 pings after the step (a step under a second
// is confirmed by 6), 500 ms apart or more (a step back within the hold
// is a delay to the model: pings closer than it would be reordered): its ENTERs and EXITs are the true ones; a DWELL comes
// within the model's uncertainty (and the delays) of the true instant,
// the ENTER's plus the dwell on the server's clock; a stay whose last
// ping inside is that much past the dwell gets its DWELL, one the device
// had left by the dwell's end, in true time, gets none, and none is
// published live after its stay's EXIT.
func TestPropertyClockStepDuringAStayKeepsTheTrueDwell(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		maxDelay := ms(rapid.SampledFrom([]int{0, 0, 50, 200}).Draw(t, "max_delay_ms"))
		h := newHarness(t, func(c *engine.Config) { c.Dwell = 10 * time.Second })
		offset := ms(rapid.IntRange(-5000, 5000).Draw(t, "offset_ms"))
		step := ms(rapid.IntRange(-5000, 5000).Draw(t, "step_ms"))
		var w []stamped
		at := time.Duration(0)
		add := func(p pos) {
			// A centimetre on from the fix before: no two real fixes are at
			// one place, and a recent one's stamp and place is a copy.
			p.lat += float64(len(w)) / 1e7
			at += ms(rapid.IntRange(500, 1500).Draw(t, "gap_ms"))
			w = append(w, stamped{p: p, at: at, stamp: at + offset, arrive: at + ms(rapid.IntRange(0, int(maxDelay/time.Millisecond)).Draw(t, "delay_ms"))})
		}
		for range clock.LearnPings + 1 {
			add(outside)
		}
		for range rapid.IntRange(1, 40).Draw(t, "inside") {
			add(inDepotZ)
		}
		enter := w[clock.LearnPings+1].at
		lastIn := at
		add(outside)
		stayEnd := at
		for range rapid.IntRange(8, 14).Draw(t, "after") {
			add(outside)
		}
		// The step comes at a true instant during the stay: the pings from
		// it on read the stepped clock.
		stepAt := enter + ms(rapid.IntRange(1, int((stayEnd-enter)/time.Millisecond)).Draw(t, "step_after_ms"))
		for i := range w {
			if w[i].at >= stepAt {
				w[i].stamp += step
			}
		}
		sent := slices.Clone(w)
		slices.SortStableFunc(sent, func(a, b stamped) int { return cmp.Compare(a.arrive, b.arrive) })
		for _, x := range sent {
			h.sendStamp("dev", x.p, t0.Add(x.stamp).UnixNano(), true, x.arrive)
		}
		h.at(at + time.Hour)
		h.proc.Flush(t0.Add(at + time.Hour))

		var moves []engine.Transition
		dwells := map[string]engine.Transition{}
		left := map[string]bool{}
		for _, tr := range h.rec.trans { // in the order published
			if tr.Type != engine.Dwell {
				moves = append(moves, tr)
				left[tr.Fence] = tr.Type == engine.Exit
				continue
			}
			if left[tr.Fence] && !tr.Historic {
				t.Fatalf("%s published live after its stay's EXIT", line(&tr))
			}
			if _, dup := dwells[tr.Fence]; dup {
				t.Fatalf("two DWELLs in %s", tr.Fence)
			}
			dwells[tr.Fence] = tr
		}
		if got, want := kinds(moves), []string{"depot ENTER", "zone ENTER", "depot EXIT", "zone EXIT"}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("clock stepped %v at +%v (stay +%v to +%v):\n got  %v\n want %v", step, stepAt, enter, stayEnd, got, want)
		}
		for fenceID, dw := range map[string]time.Duration{"depot": 10 * time.Second, "zone": 3 * time.Second} {
			tr, ok := dwells[fenceID]
			due := enter + dw
			switch {
			case ok && stayEnd <= due:
				t.Fatalf("%s: DWELL %s (timer %v) of a stay left at +%v, before its dwell ended at +%v (step %v at +%v)", fenceID, line(&tr), tr.Timer, stayEnd, due, step, stepAt)
			case !ok && lastIn >= due+stepUncertainty+maxDelay:
				t.Fatalf("%s: no DWELL, still inside at +%v, dwell ended at +%v (step %v at +%v)", fenceID, lastIn, due, step, stepAt)
			case ok:
				server := time.Unix(0, tr.Stamp-tr.Offset).Sub(t0) // its stamp on the server's clock
				if d := server - due; d > stepUncertainty+maxDelay || -d > stepUncertainty+maxDelay {
					t.Fatalf("%s: DWELL at +%v in true time, want +%v (step %v at +%v)", fenceID, server, due, step, stepAt)
				}
			}
		}
	})
}

// A stay whose DWELL came due after the last ping inside that had come
// when the device left, with later-stamped pings inside still on their
// way, gets the DWELL once they are placed: they prove it was inside at
// the dwell's instant (historic, after the EXIT). Found by
// TestPropertyClockStepDuringAStayKeepsTheTrueDwell (a step back of
// 367 ms right after the ENTER puts the last two pings inside past the
// hold).
func TestLatePingsInsideProveADwellAfterALiveExit(t *testing.T) {
	h := newHarness(t, func(c *engine.Config) { c.Dwell = 10 * time.Second })
	i := 0
	send := func(p pos, at, delay time.Duration) {
		stamp := at
		if at > 3*time.Second {
			stamp -= 367 * time.Millisecond
		}
		p.lat += float64(i) / 1e7
		i++
		h.sendStamp("dev", p, t0.Add(stamp).UnixNano(), true, at+delay)
	}
	for at := ms(500); at <= ms(2500); at += ms(500) {
		send(outside, at, 0)
	}
	for at := ms(3000); at <= ms(6000); at += ms(500) {
		send(inDepotZ, at, 0)
	}
	send(inDepotZ, ms(6500), ms(134)) // these two wait as late pings
	send(inDepotZ, ms(7000), ms(200))
	for at := ms(7500); at <= ms(11500); at += ms(500) {
		send(outside, at, 0)
	}
	h.at(time.Minute)
	h.want("dev depot ENTER +3s", "dev zone ENTER +3s", "dev depot EXIT +7.133s", "dev zone EXIT +7.133s", "dev zone DWELL +6s")
	if dw := h.rec.trans[4]; !dw.Historic {
		t.Errorf("the DWELL after the EXIT is not historic: %+v", dw)
	}
}
