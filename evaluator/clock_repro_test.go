package evaluator

import (
	"cmp"
	"fmt"
	"slices"
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

// A step back of 1.125 s, and pings fixed before it that the network held
// back longer than that: on the new clock their delay would be the
// smaller one, but there they would land among the new generation's
// pings, while on the old clock they fill the holes they left. One
// arrives while the step is being told (it even helps confirm it), one
// after (devices 1016 and 2608 of the default fleet: an ENTER and EXIT
// after the device had left).
func TestStepBackWithOldPingsDelayedPastTheStep(t *testing.T) {
	h := newHarness(t, nil)
	const period = 250 * time.Millisecond
	where := func(at time.Duration) pos {
		p := inDepot
		if at > ms(19100) {
			p = outside
		}
		p.lon += at.Seconds() * 1e-5
		return p
	}
	lateArrival := map[time.Duration]time.Duration{ms(18750): ms(20450), ms(19000): ms(21700)}
	type ping struct{ at, arrive time.Duration }
	var pings []ping
	for at := time.Duration(0); at < 30*time.Second; at += period {
		arrive := at + ms(50)
		if a, ok := lateArrival[at]; ok {
			arrive = a
		}
		pings = append(pings, ping{at, arrive})
	}
	slices.SortStableFunc(pings, func(a, b ping) int { return cmp.Compare(a.arrive, b.arrive) })
	for _, p := range pings {
		stamp := p.at
		if p.at >= 20*time.Second {
			stamp -= ms(1125)
		}
		h.send("truck-1", where(p.at), stamp, p.arrive)
	}
	h.at(time.Minute)
	h.want("truck-1 depot ENTER +0s", "truck-1 depot EXIT +19.25s")
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

// Pings fixed before a step back of 1.5 s, delayed 1.55 and 1.8 s: they
// arrived before the step and wait in the late batch when it is
// confirmed. On the new clock their delay would be the smaller, but they
// arrived before the old clock's last fresh ping could have been fixed:
// they are the old clock's (device 179 of the default fleet).
func TestPingsThatArrivedBeforeTheStepStayOnTheOldClock(t *testing.T) {
	h := newHarness(t, nil)
	const period = 250 * time.Millisecond
	where := func(at time.Duration) pos {
		p := inDepot
		if at > ms(17100) {
			p = outside
		}
		p.lon += at.Seconds() * 1e-5
		return p
	}
	lateArrival := map[time.Duration]time.Duration{ms(17000): ms(18800), ms(17250): ms(18800)}
	type ping struct{ at, arrive time.Duration }
	var pings []ping
	for at := time.Duration(0); at < 30*time.Second; at += period {
		arrive := at + ms(50)
		if a, ok := lateArrival[at]; ok {
			arrive = a
		}
		pings = append(pings, ping{at, arrive})
	}
	slices.SortStableFunc(pings, func(a, b ping) int { return cmp.Compare(a.arrive, b.arrive) })
	for _, p := range pings {
		stamp := p.at
		if p.at >= 20*time.Second {
			stamp -= ms(1500)
		}
		h.send("truck-1", where(p.at), stamp, p.arrive)
	}
	h.at(time.Minute)
	// The EXIT told live at the first outside ping that came stands for
	// the one the late pings show.
	h.want("truck-1 depot ENTER +0s", "truck-1 depot EXIT +17.5s")
}

// A tracker cold-booted during an outage (its GPS not back yet) flushes
// its backlog oldest-first, and one of its live pings, on the same
// counting clock, comes in the middle of the burst. That ping is live:
// anchored beside the backlog ping it followed, it put the whole count
// tens of seconds early, among the outage's trusted pings (device 11648
// of the default fleet: 398 phantoms).
func TestLiveBootPingInsideABacklogBurstIsLive(t *testing.T) {
	h := newHarness(t, nil)
	const period = 250 * time.Millisecond
	where := func(at time.Duration) pos {
		p := outside
		if at >= 14*time.Second && at < 17*time.Second || at >= 32*time.Second && at < 35*time.Second {
			p = inDepot
		}
		p.lon += at.Seconds() * 1e-5
		return p
	}
	stampOf := func(at time.Duration) int64 {
		if at >= 30*time.Second {
			return int64(at - 30*time.Second) // booted at +30s, counting from epoch zero
		}
		return t0.Add(at).UnixNano()
	}
	for at := time.Duration(0); at < 10*time.Second; at += period {
		h.sendStamp("truck-1", where(at), stampOf(at), true, at+ms(50))
	}
	flush := 41 * time.Second
	arrive := flush
	for at := 10 * time.Second; at < flush; at += period {
		h.sendStamp("truck-1", where(at), stampOf(at), true, arrive)
		arrive += time.Millisecond
		if at == 20*time.Second { // a live ping comes in between
			h.sendStamp("truck-1", where(flush), stampOf(flush), true, arrive)
			arrive += time.Millisecond
		}
	}
	for at := flush + period; at < 50*time.Second; at += period {
		h.sendStamp("truck-1", where(at), stampOf(at), true, at+ms(50))
	}
	h.at(2 * time.Minute)
	if got, want := kinds(h.rec.trans), []string{"depot ENTER", "depot EXIT", "depot ENTER", "depot EXIT"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("transitions in event order:\n got  %q\n want %q\n%q", got, want, h.rec.lines())
	}
}

// A tracker cold-booted during an outage flushes its backlog newest-first:
// the burst begins with the counting clock's pings, back to back. They are
// one burst, in which the count falls back ping by ping as the burst goes;
// taken one by one as live pings, the count fell back further than a
// delayed ping's would every few pings and was anchored again each time
// (device 11237 of the default fleet: 94 phantoms).
func TestNewestFirstBurstBeginningWithABootIsOneCount(t *testing.T) {
	h := newHarness(t, nil)
	const period = 250 * time.Millisecond
	where := func(at time.Duration) pos {
		p := outside
		if at >= 14*time.Second && at < 17*time.Second || at >= 30*time.Second && at < 33*time.Second {
			p = inDepot
		}
		p.lon += at.Seconds() * 1e-5
		return p
	}
	stampOf := func(at time.Duration) int64 {
		if at >= 25*time.Second {
			return int64(at - 25*time.Second) // booted at +25s, counting from epoch zero
		}
		return t0.Add(at).UnixNano()
	}
	for at := time.Duration(0); at < 10*time.Second; at += period {
		h.sendStamp("truck-1", where(at), stampOf(at), true, at+ms(50))
	}
	flush := 41 * time.Second
	arrive := flush
	for at := flush - period; at >= 10*time.Second; at -= period {
		h.sendStamp("truck-1", where(at), stampOf(at), true, arrive)
		arrive += time.Millisecond
		if at == 38*time.Second { // a live ping comes in between
			h.sendStamp("truck-1", where(flush), stampOf(flush), true, arrive)
			arrive += time.Millisecond
		}
	}
	for at := flush; at < 50*time.Second; at += period {
		h.sendStamp("truck-1", where(at), stampOf(at), true, at+ms(50))
	}
	h.at(2 * time.Minute)
	if got, want := kinds(h.rec.trans), []string{"depot ENTER", "depot EXIT", "depot ENTER", "depot EXIT"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("transitions in event order:\n got  %q\n want %q\n%q", got, want, h.rec.lines())
	}
}

// Two pings delayed a little past the behind tolerance just before a
// step back of 3 s begin a step candidate of half a second; the step's
// pings, 3 s behind, are more delayed than that candidate and were passed
// over one after the other, so the candidate neither grew nor began
// again: the step went untold for 19 s and its pings were placed on the
// old clock, 3 s early (device 10276 of the default fleet: 28 phantoms).
func TestStepBackAfterTwoDelayedPingsIsTold(t *testing.T) {
	h := newHarness(t, nil)
	const period = 250 * time.Millisecond
	where := func(at time.Duration) pos {
		p := outside
		if at > ms(18600) {
			p = inDepot
		}
		p.lon += at.Seconds() * 1e-5
		return p
	}
	delay := map[time.Duration]time.Duration{ms(19500): ms(600), ms(19750): ms(600), ms(20000): ms(500)}
	type ping struct{ at, arrive time.Duration }
	var pings []ping
	for at := time.Duration(0); at < 40*time.Second; at += period {
		d, ok := delay[at]
		switch {
		case ok:
		case at > 20*time.Second:
			d = ms(150)
		default:
			d = ms(50)
		}
		pings = append(pings, ping{at, at + d})
	}
	slices.SortStableFunc(pings, func(a, b ping) int { return cmp.Compare(a.arrive, b.arrive) })
	for _, p := range pings {
		stamp := p.at
		if p.at >= 20*time.Second {
			stamp -= 3 * time.Second
		}
		h.send("truck-1", where(p.at), stamp, p.arrive)
	}
	h.at(time.Minute)
	h.want("truck-1 depot ENTER +18.75s")
}

// A ping fixed 2 s after a step forward of 2.75 s, delayed 3.1 s: on the
// clock before the step its delay would be the smaller, but there it
// would lie seconds after anything that clock was seen to reach; it is
// the new clock's (device 2613 of the default fleet).
func TestPingAfterAStepForwardDelayedPastItStaysOnTheNewClock(t *testing.T) {
	h := newHarness(t, nil)
	const period = 250 * time.Millisecond
	where := func(at time.Duration) pos {
		p := outside
		if at > ms(21900) && at < 23*time.Second {
			p = inDepot
		}
		p.lon += at.Seconds() * 1e-5
		return p
	}
	type ping struct{ at, arrive time.Duration }
	var pings []ping
	for at := time.Duration(0); at < 40*time.Second; at += period {
		d := ms(50)
		if at == 22*time.Second {
			d = ms(3100)
		}
		pings = append(pings, ping{at, at + d})
	}
	slices.SortStableFunc(pings, func(a, b ping) int { return cmp.Compare(a.arrive, b.arrive) })
	for _, p := range pings {
		stamp := p.at
		if p.at >= 20*time.Second {
			stamp += ms(2750)
		}
		h.send("truck-1", where(p.at), stamp, p.arrive)
	}
	h.at(time.Minute)
	h.want("truck-1 depot ENTER +22.25s", "truck-1 depot EXIT +23s")
}

// A step back of 2 s two pings before the device goes silent: no third
// ping comes to confirm it, and its two pings, placed on the old clock
// once their batch was due, landed among the pings fixed before the step
// (devices 1040 and 1067 of the default fleet, at the end of the
// stream). Two pings that agree on a step of a second or more, when no
// more are to come, are the step.
func TestStepBackJustBeforeTheDeviceGoesSilent(t *testing.T) {
	h := newHarness(t, nil)
	const period = 250 * time.Millisecond
	for at := time.Duration(0); at <= 20*time.Second; at += period {
		p := outside
		if at > ms(19700) {
			p = inDepot
		}
		p.lon += at.Seconds() * 1e-5
		stamp := at
		if at > ms(19700) {
			stamp -= 2 * time.Second
		}
		h.send("truck-1", p, stamp, at+ms(50))
	}
	h.at(time.Minute)
	h.want("truck-1 depot ENTER +19.75s")
}

// A tracker whose clock stepped back 3 s during an outage, its backlog
// flushed oldest-first just as the live pings after the outage come in:
// the live pings tell the step while the burst waits to be placed. The
// burst's pings are a backlog on either clock: the step's delay rule
// cannot tell their clock (every one would be the new clock's), their
// burst can (its stamps move the wrong way once, at the step). Re-keyed
// onto the new clock and sent back to the live path, the part before the
// step overlapped the part after it (devices 17258 and 36844 of the
// default fleet: EXITs and ENTERs back and forth where it crossed once).
func TestStepBackInOutageToldByLivePingsWhileTheBurstWaits(t *testing.T) {
	h := newHarness(t, nil)
	const period = 250 * time.Millisecond
	where := func(at time.Duration) pos {
		p := inDepot
		if at >= ms(26500) && at < 31*time.Second {
			p = outside
		}
		p.lon += at.Seconds() * 1e-6 // driving: no two fixes alike
		return p
	}
	stampOf := func(at time.Duration) time.Duration {
		if at >= 25*time.Second {
			return at - 3*time.Second // the clock stepped back 3 s at +25s
		}
		return at
	}
	type ping struct{ at, arrive time.Duration }
	var pings []ping
	for at := time.Duration(0); at < 10*time.Second; at += period {
		pings = append(pings, ping{at, at + ms(60)})
	}
	flush := 40*time.Second + ms(100)
	n := 0
	for at := 10 * time.Second; at < 40*time.Second; at += period { // oldest first, 1 ms apart
		pings = append(pings, ping{at, flush + time.Duration(n)*time.Millisecond})
		n++
	}
	for at := 40 * time.Second; at < 50*time.Second; at += period {
		pings = append(pings, ping{at, at + ms(60)})
	}
	slices.SortStableFunc(pings, func(a, b ping) int { return cmp.Compare(a.arrive, b.arrive) })
	for _, p := range pings {
		h.send("truck-1", where(p.at), stampOf(p.at), p.arrive)
	}
	h.at(2 * time.Minute)
	h.wantKinds("depot ENTER", "depot EXIT historic", "depot ENTER historic")
}

// A tracker whose clock stepped back 3 s during an outage and forward
// again before it ended, its queue flushed newest-first: the flush
// begins with pings seconds old, fresh on the model's clock, and the
// backlog's stamps move the wrong way once, where the clock stepped
// back. The part after that point goes on from the fresh pings, on the
// model's clock: the older part is moved back. Moving the newer part
// forward, as when no live ping has told the step, put it among the
// fresh pings (device 25319 of the default fleet: EXITs and ENTERs back
// and forth where it crossed once).
func TestStepsBackAndForwardInOutageFlushedNewestFirst(t *testing.T) {
	h := newHarness(t, nil)
	const period = 250 * time.Millisecond
	where := func(at time.Duration) pos {
		p := inDepot
		if at >= 38*time.Second {
			p = outside
		}
		p.lon += at.Seconds() * 1e-6 // driving: no two fixes alike
		return p
	}
	stampOf := func(at time.Duration) time.Duration {
		if at >= 15*time.Second && at < 30*time.Second {
			return at - 3*time.Second // back 3 s at +15s, forward again at +30s
		}
		return at
	}
	for at := time.Duration(0); at < 10*time.Second; at += period {
		h.send("truck-1", where(at), stampOf(at), at+ms(60))
	}
	flush := 45 * time.Second
	n := 0
	for at := 45*time.Second - period; at >= 10*time.Second; at -= period { // newest first, 1 ms apart
		h.send("truck-1", where(at), stampOf(at), flush+time.Duration(n)*time.Millisecond)
		n++
	}
	for at := 46 * time.Second; at < 60*time.Second; at += period {
		h.send("truck-1", where(at), stampOf(at), at+ms(60))
	}
	h.at(2 * time.Minute)
	h.wantKinds("depot ENTER", "depot EXIT")
}

// A tracker that cold-booted (counting from epoch zero) and got its clock
// back 0.8 s behind where it was: a step back, told while a ping of the
// counting clock, delayed 0.7 s past the short adaptive hold, waited in
// the late batch. That ping's event is on the counting clock's timeline,
// not its stamp less the model's shift: the step does not move it (device
// 8090 of the default fleet: moved 2.2 s later, among the pings inside
// the fence, it revealed an EXIT and ENTER that never happened).
func TestStepBackDoesNotMoveACountingClocksLatePing(t *testing.T) {
	h := newHarness(t, adaptive)
	const period = 250 * time.Millisecond
	delayed := map[time.Duration]time.Duration{ms(18000): ms(700)}
	type ping struct {
		at, arrive time.Duration
		stamp      int64
	}
	var pings []ping
	for at := time.Duration(0); at < 40*time.Second; at += period {
		stamp := t0.Add(at).UnixNano()
		switch {
		case at >= 10*time.Second && at < 20*time.Second:
			stamp = int64(at - 10*time.Second) // booted: counting from epoch zero
		case at >= 20*time.Second:
			stamp -= int64(ms(800)) // the clock is back, 0.8 s behind
		}
		delay := ms(50)
		if d, ok := delayed[at]; ok {
			delay = d
		}
		pings = append(pings, ping{at, at + delay, stamp})
	}
	slices.SortStableFunc(pings, func(a, b ping) int { return cmp.Compare(a.arrive, b.arrive) })
	for _, p := range pings {
		where := outside
		if p.at > ms(18100) {
			where = inDepot
		}
		where.lon += p.at.Seconds() * 1e-6 // moving: no two fixes alike
		h.sendStamp("truck-1", where, p.stamp, true, p.arrive)
	}
	h.run(time.Minute)
	h.wantKinds("depot ENTER")
	if len(h.rec.late) != 0 {
		t.Fatalf("%d pings sent to the late topic, want none", len(h.rec.late))
	}
}

// A device whose every few pings come late past its short adaptive hold
// keeps a late batch open, reconciled only when its first ping has
// waited four times the history wait; its clock steps back 1.05 s just
// before then. The step's first ping is behind, in the batch: placed on
// the old clock it lands among the pings fixed before the step, inside
// the fence between two outside it. It waits for the next ping to tell
// the step (devices 9463, 22730, 29487 and 32428 of the default fleet: an
// ENTER and EXIT 0.1 s apart that never happened), and still waits when
// a straggler of the old clock came after it, undoing the step's
// candidate (device 19543: an EXIT and ENTER).
func TestLateBatchWaitsForTheStepItsLastPingBegins(t *testing.T) {
	for _, straggler := range []bool{false, true} {
		t.Run(fmt.Sprintf("straggler=%v", straggler), func(t *testing.T) {
			h := newHarness(t, adaptive)
			const period = 250 * time.Millisecond
			type ping struct {
				at, arrive time.Duration
				stamp      int64
			}
			var pings []ping
			for at := time.Duration(0); at < 40*time.Second; at += period {
				stamp := t0.Add(at).UnixNano()
				if at >= ms(16500) {
					stamp -= int64(ms(1050)) // the clock stepped back
				}
				delay := ms(50)
				if at >= 4*time.Second && at <= 14*time.Second && at%(2*time.Second) == 0 {
					delay = ms(700) // late past the hold: into the batch
				}
				if straggler && at == ms(16250) {
					delay = ms(400) // after the step's first ping, before the cap
				}
				pings = append(pings, ping{at, at + delay, stamp})
			}
			slices.SortStableFunc(pings, func(a, b ping) int { return cmp.Compare(a.arrive, b.arrive) })
			for _, p := range pings {
				where := outside
				if p.at > ms(16400) {
					where = inDepot
				}
				where.lon += p.at.Seconds() * 1e-6 // moving: no two fixes alike
				h.sendStamp("truck-1", where, p.stamp, true, p.arrive)
			}
			h.run(time.Minute)
			h.wantKinds("depot ENTER")
		})
	}
}

// A tracker inside a fence goes silent for a minute, leaving it a second
// after, and then flushes its queue newest-first, after a fresh ping: the
// fresh ping is inside again, past the dwell, and the short adaptive hold
// releases it while the burst is still coming in, before the pings that
// show the device left have arrived. Its DWELL waits for them (device
// 16134 of the default fleet: a DWELL for a stay that had ended).
func TestDwellWaitsForTheBurstAfterAFreshPing(t *testing.T) {
	h := newHarness(t, adaptive)
	const period = 250 * time.Millisecond
	where := func(at time.Duration) pos {
		p := inDepot
		if at >= 5*time.Second && at < 7*time.Second || at >= 60*time.Second {
			p = inDepotZ // the zone: a dwell of 3 s
		}
		p.lon += at.Seconds() * 1e-6 // moving: no two fixes alike
		return p
	}
	for at := time.Duration(0); at < 6*time.Second; at += period {
		h.send("truck-1", where(at), at, at+ms(50))
	}
	flush := 66 * time.Second
	h.send("truck-1", where(flush), flush, flush+ms(50)) // fresh
	n := 0
	for at := flush - period; at >= 6*time.Second; at -= period { // the backlog, newest first, 1 ms apart
		n++
		h.send("truck-1", where(at), at, flush+ms(50)+time.Duration(n)*time.Millisecond)
	}
	h.run(2 * time.Minute)
	h.wantKinds("depot ENTER", "zone ENTER", "zone EXIT historic", "zone ENTER historic", "zone DWELL historic")
}

// A clock that steps back a second just after the device enters yard
// (still in zone) at the instant zone's 3 s dwell comes due: the first
// ping after the step is behind the model, so the DWELL waits for it (it
// might show the device left zone before), and comes, historic, at its
// instant, once the next ping tells the step, after the EXIT and ENTER of
// the ping at that instant. In event order it is that ping's timeline
// (TestPropertyClockStepInventsNoTransition, -rapid.seed=10629025656481972774).
func TestDwellHeldForAStepComesAtItsInstant(t *testing.T) {
	var w []stamped
	at := time.Duration(0)
	add := func(gap int, p pos) {
		at += ms(gap)
		w = append(w, stamped{p: p, at: at, stamp: at, arrive: at})
	}
	for range 19 {
		add(200, inDepot)
	}
	add(200, inDepotZ)  // +4s: zone ENTER, its DWELL due at +7s
	add(1500, inDepotZ) // +5.5s
	add(1500, inYardZ)  // +7s: depot EXIT, yard ENTER, zone DWELL
	for range 18 {
		add(200, inDepot)
	}
	for i := 22; i < len(w); i++ {
		w[i].stamp -= time.Second
	}
	h := run(t, w, nil)
	var got []string
	for _, tr := range h.rec.trans {
		if tr.Event == t0.Add(7*time.Second).UnixNano() {
			got = append(got, fmt.Sprint(tr.Fence, " ", tr.Type, map[bool]string{true: " historic"}[tr.Historic]))
		}
	}
	if want := []string{"depot EXIT", "yard ENTER", "zone DWELL historic"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("at +7s, published\n got  %q\n want %q", got, want)
	}
	if want, got := timelines(truthOf(t, w), h.rec.trans); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("in event order:\n got  %v\n want %v", got, want)
	}
}
