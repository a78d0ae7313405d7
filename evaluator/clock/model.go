// Package clock is the engine's model of a device's clock: where its
// stamps sit against the server's wall clock and the steps it took
// (Model), and the checks of a stamp that need no device history
// (Clamper). docs/clock.md describes the model.
package clock

import "math"

// Model is one device's clock model: where its stamps sit against the
// server's wall clock, and the steps it took. Ordering uses the device's
// timeline, its stamp minus the steps detected so far (shift), so that a
// device that never steps is ordered by its stamps as sent, and one that
// steps forward or back stays continuous across the step. Only the
// device's shard touches it.
type Model struct {
	// off estimates timeline − server wall clock. Transit delay is never
	// negative, so the largest timeline − ingest of the pings that agree
	// with the model approaches it (NTP's minimum-delay filter).
	off int64
	// shift is the sum of the steps detected: timeline = stamp − shift.
	shift int64
	// A step candidate: pings that disagree with the model in the same
	// direction, consistently with each other. cand is their largest
	// timeline − ingest, lastArr the arrival of the newest.
	cand, lastArr int64
	// The generation before the last step, and the latest instant of the
	// timeline its fresh pings had reached when the step was found: pings
	// fixed before a step may still arrive after it.
	prevShift, stepEnd int64
	// The arrival of the previous ping, and whether it was a counting
	// clock's; the timeline and arrival of the latest ping of a backlog
	// (one far behind the device's clock): a counting clock's pings in a
	// backlog burst are placed beside their neighbours in it, whatever
	// live ping came in between.
	prevArr              int64
	burstEvent, burstArr int64
	// gapAt is the newest instant of the timeline before the latest
	// forward step that the offset absorbed, gapUs the step in µs: the
	// timeline gained it after gapAt in no true time (see After).
	gapAt int64
	// boot is a cold-booted tracker's counting clock, from its first
	// stamp before the plausibility floor (rare: allocated then).
	boot     *bootClock
	learned  uint8 // pings learned from, saturating at LearnPings
	candN    int8  // +n: n pings ahead; −n: n pings behind
	passed   uint8 // pings more delayed than the candidate passed over since it grew
	prevBoot bool
	gapUs    int32 // in what was padding
}

// bootClock places a counting clock's stamps on the device's timeline:
// stamp − anchor.
type bootClock struct {
	anchor int64
	// prov is set while the anchor is the model's clock rather than a
	// neighbour in a burst, since arrival arr; step is the count's last
	// step between consecutive pings, last the latest timeline it reached.
	prov                  bool
	arr, step, last, prev int64 // prev: the timeline of the count's previous ping
	// beside is the backlog ping's timeline the count was anchored beside
	// in a burst (0: none), clock the model's clock when it was: a live
	// ping may come in the middle of a burst (see Reanchor).
	beside, clock int64
}

// State is a model's state, for the devices-per-state gauge and
// introspection.
type State uint8

// Model states.
const (
	Unknown  State = iota // no stamp learned from yet
	Learning              // fewer than LearnPings
	Locked                // the skew tolerance applies
	Stepping              // a step candidate is pending
	NumStates
)

// StateNames are the states' metric labels, indexed by State.
var StateNames = [NumStates]string{"unknown", "learning", "locked", "stepping"}

// LearnPings is how many pings a new device's offset is learned from
// before stamps are judged against it: a first ping may have come late.
const LearnPings = 4

// stepPings is how many consistent pings confirm a step of a second or
// more. Fewer made runs of delayed pings look like steps; more kept a
// stepped device's pings aside for longer.
const stepPings = 3

// MinBehind is how far behind its model a stamp may always be and still
// count as fresh; the rest are delayed pings or a backward step. The
// tolerance is the hold when that is longer: a ping delayed less than the
// hold is one the buffer orders, never a step's.
const MinBehind = 400_000_000

// State returns the model's state for gauges and introspection.
func (c *Model) State() State {
	switch {
	case c.learned == 0:
		return Unknown
	case c.candN != 0:
		return Stepping
	case c.learned < LearnPings:
		return Learning
	}
	return Locked
}

// Verdict is what the model makes of one stamp.
type Verdict uint8

const (
	Fresh   Verdict = iota // agrees with the model: ordered by its timeline
	Ahead                  // implausibly ahead: clamped to the model's clock
	Behind                 // behind the model: delayed, or a backward step under way
	Stepped                // confirmed a step: the model's shift moved
)

// Judge places a stamp (Unix ns, after the front-end's absolute checks)
// received at server wall time wall and processor instant now, learning
// from it. skew is how far ahead of the model a stamp may be, behindTol
// how far behind, maxOff how far from the server a new device's clock may
// be; high is the newest instant of the device's timeline so far (where
// a step forward that the offset absorbs begins).
func (c *Model) Judge(stamp, wall, now, skew, behindTol, maxOff, high int64) Verdict {
	y := stamp - c.shift - wall
	if c.learned < LearnPings {
		// A new device: trust it within maxOff, learn upward only (a
		// first ping that came late says the clock is behind).
		if y < -maxOff {
			return Fresh // a backlog: its stamps are fine, it teaches nothing
		}
		if c.learned == 0 || y > c.off {
			c.off = y
		}
		c.learned++
		return Fresh
	}
	switch {
	case y > c.off+skew && y > skew:
		// Ahead of the model and of the server: a glitch or a forward
		// step. (A stamp at or before the server's clock is never ahead:
		// a backlog's stamps rise toward it.)
		if c.candidate(1, y, now) {
			return c.step()
		}
		return Ahead
	case y < c.off-behindTol:
		if c.candidate(-1, y, now) {
			return c.step()
		}
		return Behind
	}
	c.candN = 0
	if y > c.off {
		c.absorb(y-c.off, stamp-c.shift, high)
		c.off = y
	}
	return Fresh
}

// absorb notes a rise of the offset by rise at the ping at event on the
// timeline, after the instant high. More than the model's noise is a step
// forward that the offset absorbed (within the skew tolerance, or toward
// the server's clock): the timeline gained it after high in no true
// time. A rise within gapWindow of such a step is more of it (the
// transit delays of its first pings hid part of it); any other is the
// minimum-delay filter learning, within the model's uncertainty.
func (c *Model) absorb(rise, event, high int64) {
	switch {
	case c.gapUs != 0 && c.gapAt >= event-gapWindow:
		c.gapUs = int32(min(int64(c.gapUs)+rise/1000, math.MaxInt32))
	case rise > noise:
		c.gapAt, c.gapUs = min(high, event), int32(min(rise/1000, math.MaxInt32))
	}
}

// gapWindow is how long on the timeline after a step forward the offset
// absorbed its rest may still come: a few pings' transport delays.
const gapWindow = stragglerWindow

// After returns the instant on the timeline at which d of true elapsed
// time has passed since from: d after it, and the step forward that the
// offset absorbed in between, if any (a step the model told is in the
// shift and leaves no gap). A stay's dwell is measured so, not on the
// device's stamps: a clock that jumps forward during a stay does not
// make it longer. Only the latest such step is known: of two in one
// stay, the earlier one is not left out.
func (c *Model) After(from, d int64) int64 {
	at := from + d
	if c.gapUs != 0 && from <= c.gapAt && at > c.gapAt {
		at += int64(c.gapUs) * 1000 // on the clock after the step
	}
	return at
}

// OffAt is the model's offset (Off) as it was at event on the timeline:
// before a step forward that it absorbed, without it.
func (c *Model) OffAt(event int64) int64 {
	if c.gapUs != 0 && event <= c.gapAt {
		return c.off - int64(c.gapUs)*1000
	}
	return c.off
}

// candidate adds a disagreeing ping to the step candidate (dir +1 ahead,
// −1 behind) and reports whether it confirms a step. A ping joins when it
// disagrees by about as much as the candidate's freshest (its timeline −
// ingest within stepBand below theirs: a step moves every ping alike, the
// network delays some more) and did not come in a burst: a backlog
// arriving milliseconds apart moves its stamps by seconds and never
// confirms. A fresher one begins the candidate again, and so does a more
// delayed one when the candidate is a single ping (a straggler of the
// old clock may have begun it) or has passed over as many pings as
// confirm a step (stragglers of the old clock began it, and the step's
// pings are more behind); else a more delayed one is passed over.
func (c *Model) candidate(dir int8, y, now int64) bool {
	da := now - c.lastArr
	c.lastArr = now
	switch {
	case c.candN == 0 || (c.candN > 0) != (dir > 0) || y > c.cand+stepBand ||
		y < c.cand-stepBand && (c.candN == 1 || c.candN == -1 || c.passed >= stepPings):
		c.cand, c.candN, c.passed = y, dir, 0
		return false
	case da < BurstGap: // a burst's: it tells nothing of a step
		return false
	case y < c.cand-stepBand:
		c.passed++
		return false
	}
	c.cand = max(c.cand, y)
	c.candN += dir
	c.passed = 0
	n := int(c.candN) * int(dir)
	// A step under a second is a few delayed pings in a row about as often
	// as it is a step: it needs twice the evidence.
	if d := c.cand - c.off; n >= 2*stepPings || n >= stepPings && (d >= smallStep || d <= -smallStep) {
		return true
	}
	return false
}

// TellPending confirms a pending step back when no more pings are to
// come for it (its late pings are being placed): two or more pings agree
// on it and it is of a second or more, which a few delayed pings in a row
// seldom are. It reports whether it did.
func (c *Model) TellPending() bool {
	if c.candN > -2 || c.cand-c.off > -smallStep {
		return false
	}
	c.step()
	return true
}

// stepBand is how much more delayed than the candidate's freshest ping a
// ping of the same step may be: most transport delays differ by less.
const stepBand = 300_000_000

// smallStep is the size under which a step needs twice the pings.
const smallStep = 1_000_000_000

// step starts a new clock generation at the candidate's offset, keeping
// the timeline continuous: a stamp of the new generation lands where the
// model expected it.
func (c *Model) step() Verdict {
	c.shift += c.cand - c.off
	c.candN = 0
	return Stepped
}

// Previous reports whether a stamp received at wall belongs to the
// generation before the last step: shortly after a step, a ping goes to
// the generation in which its transit delay is the smallest that is not
// negative (beyond the model's noise), unless on the one before it would
// lie well after anything that generation was seen to reach.
func (c *Model) Previous(stamp, wall int64) bool {
	if !c.afterStep(wall) || stamp-c.prevShift > c.stepEnd+prevMargin {
		return false
	}
	dCur := c.off - (stamp - c.shift - wall)
	dPrev := c.off - (stamp - c.prevShift - wall)
	return dPrev >= -noise && (dCur < -noise || dPrev < dCur)
}

// Straddles reports whether a stamp received at wall may belong to the
// generation before the last step although Previous finds it the current
// one's: shortly after a step, its transit delay would not be negative
// there either, and it came late on the current clock too. Only the pings
// around it can tell (see the processor's placement).
func (c *Model) Straddles(stamp, wall int64) bool {
	if !c.afterStep(wall) || stamp-c.prevShift > c.stepEnd {
		return false // or after where the old generation was seen to reach
	}
	d := c.off - (stamp - c.prevShift - wall)
	// A backlog's pings are its burst's to place; one in time on the
	// current clock is the current clock's.
	return d >= -noise && d < BacklogAge && c.Late(stamp-c.shift, wall)
}

// Late reports whether a ping at event on the timeline, received at
// wall, came later than the model's noise: a straggler on this clock too.
func (c *Model) Late(event, wall int64) bool { return c.off-(event-wall) > noise }

// Overtaken reports whether a ping received at wall came before a fresh
// ping received at fresh could have been fixed (a fresh ping is delayed
// by at most behindTol and the model's noise): it was fixed before that
// one, on its clock.
func (c *Model) Overtaken(wall, fresh, behindTol int64) bool {
	return wall < fresh-behindTol-noise
}

// afterStep reports whether a ping received at wall comes shortly after
// a step (within stragglerWindow of the device's clock).
func (c *Model) afterStep(wall int64) bool {
	return c.stepEnd != 0 && wall+c.off-c.stepEnd <= stragglerWindow && c.learned >= LearnPings
}

// Newer reports whether a ping at event on the timeline before a step by
// shift (received at wall) belongs to the generation the step just began
// rather than to the one before it: the one in which its transit delay
// is the smaller that is not negative.
func (c *Model) Newer(event, wall, shift int64) bool {
	dOld := c.off - (event - wall)
	dNew := dOld + shift
	return dNew >= -noise && (dOld < -noise || dNew < dOld)
}

// prevMargin is how far after the freshest ping of the generation before
// a step, on the timeline, a ping of that generation may still have been
// fixed: about a report interval and a transport delay.
const prevMargin = 1_000_000_000

// noise is how far ahead of the model a stamp of its generation may be:
// the minimum-delay filter settles a little above the true minimum.
const noise = 250_000_000

// stragglerWindow is how long after a step a ping may still belong to the
// generation before it: a few times the transport delay's tail.
const stragglerWindow = 10_000_000_000

// BootTimeline places a stamp before the plausibility floor (a cold boot
// counting from epoch zero or 1980), received at wall and processor
// instant arr, on the device's timeline by its counting clock. The clock
// is anchored at its first such stamp: beside the ping that arrived just
// before it in a backlog burst (pings milliseconds apart: a burst's
// arrival says nothing of when its pings were fixed), else at the model's
// clock, provisionally: a burst may only begin with it (see Reanchor). A
// count that ran ahead of the clock or, outside a burst, fell back
// further than a delayed ping would (bootFallback) is anchored again: the
// tracker booted again.
func (c *Model) BootTimeline(stamp, wall, arr, skew int64) int64 {
	now := wall + c.off
	// In a burst: right after a backlog ping, or after a counting clock's
	// ping back to back (a burst may begin with them).
	burst := c.learned > 0 && (arr-c.burstArr < BurstGap || c.prevBoot && arr-c.prevArr < BurstGap)
	flowing := arr-c.prevArr >= BurstGap // not back to back: no burst begins here
	c.prevArr, c.prevBoot = arr, true
	b := c.boot
	if b != nil && flowing {
		b.prov = false
	}
	if b != nil {
		// The same count goes on (through an outage too) unless it ran
		// ahead of the clock or, outside a burst, fell back further than
		// a transport delay explains: a restart. (A ping the network
		// held back a few seconds is late, not a new boot; a count that
		// starts again from where a short boot's began long ago is one.)
		if t := stamp - b.anchor; t <= now+skew && (burst || t >= b.last-skew || t >= b.last-bootFallback && t >= now-bootFallback) {
			if burst && b.prov {
				b.step = t - b.prev
			}
			if !burst && t > now {
				// A ping that came faster than the one anchoring the count
				// (the minimum-delay filter again): anchor it closer.
				b.anchor, t = stamp-now, now
			}
			b.prev, b.last = t, max(b.last, t)
			if burst {
				c.burstEvent, c.burstArr = t, arr
			}
			return t
		}
	} else {
		b = new(bootClock)
		c.boot = b
	}
	at := now
	if burst {
		at = c.burstEvent
		c.burstArr = arr
	}
	*b = bootClock{anchor: stamp - at, prov: !burst, arr: arr, last: at, prev: at}
	if burst {
		b.beside, b.clock = at, now
	}
	return at
}

// bootFallback is how far a counting clock's stamp may fall back behind
// the latest it reached, outside a burst, and still be a delayed ping of
// the same count: a few times the transport delay's tail. A tracker that
// restarts counts from zero again, far further back unless it had been
// up only seconds.
const bootFallback = stragglerWindow

// Reanchor is called for a ping with a trusted stamp at timeline event,
// received at wall and arr. If it follows a provisionally anchored
// counting clock's pings in a burst, it returns how far to move those
// pings (received since the anchor was set: c.boot.arr) so that they sit
// beside it, in the burst's direction.
func (c *Model) Reanchor(event, wall, arr int64) (delta int64, ok bool) {
	now := wall + c.off
	b := c.boot
	backlog := now-event > BacklogAge
	inBurst := b != nil && c.prevBoot && arr-c.prevArr < BurstGap && backlog
	burst := inBurst && b.prov
	// A count anchored beside a backlog ping, followed by a backlog ping
	// that goes on from that one (as close as its neighbours are, not a
	// boot's length away): the count's pings came in between, live. They
	// move to the model's clock of their arrival.
	interleaved := inBurst && b.beside != 0 && event-b.beside < liveGap && b.beside-event < liveGap
	c.prevArr, c.prevBoot = arr, false
	if backlog {
		c.burstEvent, c.burstArr = event, arr
	}
	if b != nil {
		b.prov = false
		if interleaved {
			delta = b.clock - b.beside
			b.anchor -= delta
			b.prev += delta
			b.last += delta
		}
		b.beside = 0
	}
	if interleaved {
		return delta, true
	}
	if !burst {
		return 0, false
	}
	last := b.prev
	// Oldest-first (the count rose), the boot's last ping came just before
	// this one; newest-first, just after. One ping alone: oldest-first, the
	// common flush.
	step := b.step
	if step == 0 {
		step = 1_000_000
	}
	delta = event - step - last
	b.anchor -= delta
	b.prev += delta
	b.last += delta
	return delta, true
}

// liveGap is how far apart, on the timeline, the backlog pings on either
// side of a counting clock's pings in a burst are at most when those
// pings came in between live: neighbours in a backlog are one report
// interval apart; a cold boot inside an outage separates them by the
// boot's length, seconds at least.
const liveGap = 1_000_000_000

// BurstGap is how close a ping follows the one before it in a backlog
// burst: a tracker flushing its queue sends them back to back.
const BurstGap = 50_000_000

// neverArrived is the previous arrival of a device's first ping: long
// before it, whatever the processor's clock.
const neverArrived = -1 << 62

// New returns the model of a device not heard from yet.
func New() Model { return Model{prevArr: neverArrived, burstArr: neverArrived} }

// Known reports whether the model has learned from a stamp.
func (c *Model) Known() bool { return c.learned > 0 }

// Learned reports whether the model has learned from LearnPings stamps:
// stamps are then judged against it.
func (c *Model) Learned() bool { return c.learned >= LearnPings }

// Off is the model's offset: timeline − server wall clock, in ns.
func (c *Model) Off() int64 { return c.off }

// Shift is the sum of the steps detected: timeline = stamp − Shift.
func (c *Model) Shift() int64 { return c.shift }

// PrevShift is the shift of the generation before the last step.
func (c *Model) PrevShift() int64 { return c.prevShift }

// MarkStep records a step confirmed when the fresh pings of the
// generation before it, with shift prev, had reached end on the timeline
// (0: unknown): its pings may still arrive (see Previous).
func (c *Model) MarkStep(prev, end int64) { c.prevShift, c.stepEnd = prev, end }

// Pending is the step candidate: +n for n pings ahead, −n for n behind.
func (c *Model) Pending() int { return int(c.candN) }

// PrevArrival is the processor instant the previous ping arrived.
func (c *Model) PrevArrival() int64 { return c.prevArr }

// BootArrival is when the counting clock's anchor was set (see
// Reanchor); the model must have one.
func (c *Model) BootArrival() int64 { return c.boot.arr }

// BacklogAge is how far behind the device's clock the pings of a backlog
// burst are at least: two pings that merely came close together, one of
// them delayed, are no burst.
const BacklogAge = 5_000_000_000
