package evaluator

import (
	"fmt"
	"testing"
	"time"
)

// Reproductions of phantom transitions the simulator's default fleet
// found (docs/clock.md, "What remains"): a device's ping stream, as the
// server receives it, and the transitions it must give.

// kinds renders transitions as "fence TYPE" (historic ones marked),
// without instants: a counting clock's anchor is an estimate.
func (r *recorder) kinds() []string {
	out := make([]string, 0, len(r.trans))
	for _, t := range r.trans {
		s := fmt.Sprintf("%s %s", t.Fence, t.Type)
		if t.Historic {
			s += " historic"
		}
		out = append(out, s)
	}
	return out
}

func (h *harness) wantKinds(want ...string) {
	h.t.Helper()
	if got := h.rec.kinds(); fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Fatalf("transitions:\n got  %q\n want %q", got, want)
	}
}

// A cold-booted tracker's ping delayed 2.5 s: its count fell back by more
// than the skew tolerance, but by no more than a transport delay, against
// the pings that overtook it. It is a late ping of the same count, not a
// second boot: anchored as a new boot at its arrival it was placed after
// the pings fixed after it (device 1097 of the default fleet: an EXIT,
// ENTER, EXIT where the device left once).
func TestColdBootPingDelayedPastTheSkewIsNoRestart(t *testing.T) {
	h := newHarness(t, nil)
	const period = 250 * time.Millisecond
	delayed := ms(11750)
	var late time.Duration
	for at := time.Duration(0); at < 20*time.Second; at += period {
		p := outside
		if at >= 8*time.Second && at < 12*time.Second {
			p = inDepot
		}
		stamp := t0.Add(at).UnixNano()
		if at >= 5*time.Second {
			stamp = int64(at - 5*time.Second) // counting from epoch zero since the boot
		}
		arrive := at + ms(50)
		if at == delayed {
			late = arrive + ms(2450)
			continue
		}
		if late != 0 && arrive > late {
			h.sendStamp("truck-1", inDepot, int64(delayed-5*time.Second), true, late)
			late = 0
		}
		h.sendStamp("truck-1", p, stamp, true, arrive)
	}
	h.at(time.Minute)
	h.wantKinds("depot ENTER", "depot EXIT")
}

// A tracker whose clock stepped back during an outage, its backlog
// flushed newest-first with no live ping after it: the burst's stamps
// move the wrong way once, at the step. The older part is on the clock
// the model still has (the committed pings before the outage say so):
// the newer part is moved, not the older one, which moved back over the
// committed pings interleaved with them (devices 769, 1200, 772 and 1061
// of the default fleet, 42 of 4,000 devices' 157 phantoms).
func TestStepBackInOutageFlushedNewestFirstWithNoLivePingAfter(t *testing.T) {
	h := newHarness(t, nil)
	const period = 250 * time.Millisecond
	where := func(at time.Duration) pos {
		p := inDepot
		if at >= ms(8500) && at < 12*time.Second {
			p = outside
		}
		p.lon += at.Seconds() * 1e-5 // driving: no two fixes alike
		return p
	}
	for at := time.Duration(0); at < 10*time.Second; at += period {
		h.send("truck-1", where(at), at, at+ms(60))
	}
	var backlog []time.Duration
	for at := 10 * time.Second; at < 40*time.Second; at += period {
		backlog = append(backlog, at)
	}
	flush := 45 * time.Second
	for i := len(backlog) - 1; i >= 0; i-- { // newest first, 1 ms apart
		at := backlog[i]
		stamp := at
		if at >= 25*time.Second {
			stamp -= 3 * time.Second // the clock stepped back 3 s at +25s
		}
		h.send("truck-1", where(at), stamp, flush+time.Duration(len(backlog)-1-i)*time.Millisecond)
	}
	h.at(2 * time.Minute)
	// After what the device committed: live, in event order.
	h.want("truck-1 depot ENTER +0s", "truck-1 depot EXIT +8.5s", "truck-1 depot ENTER +12s")
}

// A tracker that booted, got its GPS fix 7 s later, and booted again
// minutes after, counting from the same epoch: its new count falls back
// by no more than a delayed ping's would against the first boot's, but
// that count ended long ago. It is a new boot: its pings are placed at
// the device's clock, not before everything it committed (device 3162
// of the default fleet lost 38 s of pings to the late topic).
func TestSecondShortBootOnTheSameEpochIsARestart(t *testing.T) {
	h := newHarness(t, nil)
	const period = 250 * time.Millisecond
	stampOf := func(at time.Duration) int64 {
		switch {
		case at >= 5*time.Second && at < 12*time.Second:
			return int64(at - 5*time.Second) // the first boot, from epoch zero
		case at >= 60*time.Second && at < 80*time.Second:
			return int64(at - 60*time.Second) // the second
		}
		return t0.Add(at).UnixNano()
	}
	for at := time.Duration(0); at < 90*time.Second; at += period {
		p := outside
		if at >= 70*time.Second {
			p = inDepot
		}
		p.lon += at.Seconds() * 1e-6
		h.sendStamp("truck-1", p, stampOf(at), true, at+ms(50))
	}
	h.at(2 * time.Minute)
	h.wantKinds("depot ENTER")
	if len(h.rec.late) != 0 {
		t.Fatalf("%d pings sent to the late topic, want none", len(h.rec.late))
	}
}
