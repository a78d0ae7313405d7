package evaluator

import (
	"testing"
	"time"
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
