package evaluator

import (
	"math"
	"strings"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/history"
	"github.com/edgefence/edgefence/evaluator/hold"
	"github.com/edgefence/edgefence/evaluator/inspect"
	"github.com/edgefence/edgefence/evaluator/presence"
	"github.com/edgefence/edgefence/evaluator/reorder"
	"github.com/edgefence/edgefence/evaluator/stats"
)

// Processor is the engine for the devices of one shard: reorder buffers,
// watermarks and the state machine, driven by explicit instants so that it
// runs the same in real time (a shard goroutine) and in virtual time (the
// simulator). It is not safe for concurrent use: one owner, no locks.
type Processor struct {
	cfg    engine.Config
	base   time.Time // origin of processor-relative instants
	fences func() *fence.Set
	sink   engine.Sink
	m      *stats.Metrics
	search *fence.Searcher
	pol    hold.Policy // the adaptive hold's, when Config.Adaptive()

	devices  map[string]*device
	all      []*device // every device, for the sweep: device.slot is its index
	cursor   int       // the sweep's next index in all; those before it are swept this round
	timers   reorder.Deadlines[*device]
	dwells   reorder.Deadlines[*device] // DWELL timers of silent devices (settleDwell)
	buffered int
	deferred int          // pings in late batches
	census   stats.Census // devices per clock state and hold, a sweep round at a time
	batches  history.Pool // spare late batches, so reconciling does not allocate

	// scratch of reconciliation
	redo     []reorder.Held
	keep     []reorder.Held // a batch's pings that wait for the next
	merged   []history.Point
	changes  history.Changes
	revealed []engine.Transition // historic transitions of one run, sorted before they go out
	burst    []int               // indices of one backlog burst in a late batch

	// scratch, reused so the per-ping path does not allocate
	ping   engine.Ping
	out    engine.Transition
	late   engine.Late
	dues   []presence.Due
	owed   presence.Owing[*device] // DWELLs owed to stays replaced while late pings waited (payOwed)
	eff    []*fence.Fence          // a ping's fences after accuracy hysteresis
	inside []*fence.Fence          // the fences a device is inside, for it
	held   []*fence.Fence          // …after fence.Hold

	watched inspect.Watchlist[*device] // devices being inspected
}

// NewProcessor returns a processor whose instants count from base. fences
// is called for every evaluation and must return the current snapshot.
func NewProcessor(cfg engine.Config, base time.Time, fences func() *fence.Set, sink engine.Sink, m *stats.Metrics) (*Processor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if m == nil {
		m = stats.NewMetrics(nil)
	}
	return &Processor{
		cfg:     cfg,
		base:    base,
		fences:  fences,
		sink:    sink,
		m:       m,
		search:  fence.NewSearcher(),
		pol:     cfg.Policy(),
		devices: make(map[string]*device),
	}, nil
}

// at converts an instant to processor-relative nanoseconds; monotonic
// readings are used when both sides have them.
func (p *Processor) at(t time.Time) int64 { return int64(t.Sub(p.base)) }

// Devices returns how many devices the processor holds state for.
func (p *Processor) Devices() int { return len(p.devices) }

// Buffered returns how many pings wait in reorder buffers.
func (p *Processor) Buffered() int { return p.buffered }

func (p *Processor) device(id string) *device {
	d := p.devices[id]
	if d == nil {
		// Clone: the caller's id may point into a larger buffer we must not pin.
		d = &device{id: strings.Clone(id), high: noTime, wm: noTime, done: noTime, clk: clock.New(), holdUs: int32(max(p.cfg.Hold, 0) / time.Microsecond), slot: int32(len(p.all))}
		if p.cfg.Adaptive() {
			d.est.Widen(&p.pol) // just started: its lateness is not known yet
			d.holdUs = int32(p.pol.Max / time.Microsecond)
		}
		p.devices[d.id] = d
		p.all = append(p.all, d)
	}
	return d
}

// SetHold sets one device's allowed lateness (a device with an unstable
// clock may need more than the default), capped at MaxHold; the pings it
// holds wait the new hold. With the adaptive hold, the device's next ping
// sets it again.
func (p *Processor) SetHold(id string, hold time.Duration) {
	d := p.device(id)
	d.holdUs = int32(min(max(hold, 0), engine.MaxHold) / time.Microsecond)
	// The queued deadlines were computed with the old hold: queue the new ones.
	for i := range d.buf {
		d.buf[i].HoldUs = uint32(d.holdUs)
		p.timers.Push(d.buf[i].Deadline(), d)
	}
}

// Hold returns a device's current hold, and false when it has no state.
func (p *Processor) Hold(id string) (time.Duration, bool) {
	if d := p.devices[id]; d != nil {
		return time.Duration(d.hold()), true
	}
	return 0, false
}

// Deferred returns how many late pings wait to be reconciled.
func (p *Processor) Deferred() int { return p.deferred }

// Ingest takes one ping. Its stamp is placed on its device's timeline by
// the device's clock model; then it is buffered, released at once (when
// it comes after everything committed, or arrival-order evaluation is
// on), or held to be reconciled into the device's history (when it comes
// before). Call Advance afterwards to release pings whose hold expired.
func (p *Processor) Ingest(pg *engine.Ping) {
	now := p.at(pg.Ingest)
	d := p.device(pg.Device)
	p.ingest(d, pg, now)
	// The ping may have left d silent (released, or evaluated at once)
	// and moved its clock estimate: its DWELL timer moves with it.
	p.settleDwell(d, now, true)
}

func (p *Processor) ingest(d *device, pg *engine.Ping, now int64) {
	wall := pg.Ingest.UnixNano()
	if d.wm != noTime {
		p.m.WatermarkLag.Observe(time.Duration(wall - d.wm))
	}
	pg.Device = d.id // buffered copies share the device's string
	// Rounded to what the history keeps, so that a ping evaluated again
	// after a late one is placed before it gives the answer it gave live.
	pg.Lat, pg.Lon = history.Quantize(pg.Lat), history.Quantize(pg.Lon)
	if p.watched.Len() > 0 {
		p.observe(d, pg, now)
	}
	if d.holdUs == 0 && !p.cfg.Adaptive() {
		// Arrival order: no buffer, so nothing can be late either.
		d.raise(pg.Event, wall, now, int64(p.cfg.Skew))
		p.evaluate(d, pg, now, now)
		return
	}
	// A redelivered copy (QoS 1 after a reconnect) of a recent ping is
	// dropped before anything weighs it: the clock model, the burst, the
	// late batch. Only a stamp the device gave can tell a copy.
	if (pg.Clamp == clock.ClampNone || pg.Clamp == clock.ClampWeekRollover) && d.recent.Copy(pg.Event, history.Fixed(pg.Lat), history.Fixed(pg.Lon)) {
		p.m.Copies.Inc()
		return
	}
	// A ping that follows the one before within milliseconds is part of a
	// backlog burst: its order is the burst's, not its arrival's.
	burst := now-d.clk.PrevArrival() < clock.BurstGap
	v := p.judge(d, pg, wall, now)
	if p.cfg.Adaptive() {
		d.adapt(v, pg.Event, &p.pol)
	}
	h := reorder.HeldOf(pg, wall, now)
	if v == clock.Behind && p.cfg.History > 0 {
		// Delayed, or the first pings of a backward step: decided when the
		// next ping says which.
		p.deferLate(d, &h, now)
		return
	}
	p.placeLive(d, &h, burst, now)
}

// judge places pg's stamp on d's timeline (pg.Event, pg.Stamp) and
// learns from it. A clamped stamp, or one the model finds implausible,
// is set to the model's clock; a confirmed step puts the pings held
// while it was a candidate back on the live path, re-keyed.
func (p *Processor) judge(d *device, pg *engine.Ping, wall, now int64) clock.Verdict {
	c := &d.clk
	skew := int64(p.cfg.Skew)
	model := wall + c.Off() // the device's clock now, as the model has it
	if !c.Known() {
		model = wall
	}
	switch pg.Clamp {
	case clock.ClampNone, clock.ClampWeekRollover:
	case clock.ClampBeforeFloor:
		if pg.HasStamp {
			pg.Event = c.BootTimeline(pg.Stamp, wall, now, skew)
			pg.Stamp = pg.Event + c.Shift()
			return clock.Fresh
		}
		fallthrough
	default: // missing, or beyond the largest clock offset
		pg.Event, pg.Stamp = model, model+c.Shift()
		return clock.Fresh
	}
	stamp := pg.Event // as sent, or repaired
	if c.Previous(stamp, wall) || c.Straddles(stamp, wall) && d.FillsHole(d.buf, stamp-c.PrevShift(), stamp-c.Shift(), -1) {
		// A ping of the generation before the last step, delayed past it:
		// its transit delay is the smaller there, or, when it is not
		// negative on either, it fills a hole the old generation left
		// rather than crowding the new one's pings.
		pg.Stamp, pg.Event = stamp, stamp-c.PrevShift()
		return clock.Fresh
	}
	behindTol := p.cfg.BehindTol(d.hold())
	if c.Learned() && stamp-c.Shift()-wall < c.Off()-behindTol && d.Seen(d.buf, stamp-c.Shift(), pg.Lat, pg.Lon) {
		// A redelivered copy: it says nothing of the clock.
		pg.Stamp, pg.Event = stamp, stamp-c.Shift()
		return clock.Fresh
	}
	shift0 := c.Shift()
	v := c.Judge(stamp, wall, now, skew, behindTol, int64(p.cfg.MaxClockOffset), d.high)
	pg.Stamp = stamp
	pg.Event = stamp - c.Shift()
	if delta, ok := c.Reanchor(pg.Event, wall, now); ok {
		d.moveBoot(c.BootArrival(), delta)
	}
	switch {
	case v == clock.Ahead:
		pg.Event = model
		pg.Clamp = clock.ClampAhead
		p.m.Clamped[clock.ClampAhead].Inc()
	case v == clock.Stepped:
		d.markStep(shift0)
		p.m.Steps.Inc()
		p.undefer(d, c.Shift()-shift0, now)
	}
	if v != clock.Ahead && c.Learned() {
		p.m.Offset.Observe(time.Duration(c.Off() + c.Shift()))
	}
	return v
}

// placeLive buffers a judged ping, releases it at once when it comes
// after everything committed and the watermark is past it, or holds it
// for reconciliation when it comes before what was committed or in a
// burst.
func (p *Processor) placeLive(d *device, h *reorder.Held, burst bool, now int64) {
	switch {
	case h.Event > d.wm:
		h.HoldUs = uint32(d.holdUs)
		d.buf.Push(h)
		p.buffered++
		// One deadline per buffered ping: they come in arrival order, so
		// with one hold the queue is a FIFO (see reorder.Deadlines).
		p.timers.Push(h.Deadline(), d)
		if h.Clamp != clock.ClampBeforeFloor {
			// A counting clock's anchor is a guess until its burst says
			// otherwise (clock.Model.Reanchor): it moves nothing.
			d.raise(h.Event, h.Wall, now, int64(p.cfg.Skew))
		}
		if w := d.high - d.hold(); w > d.wm {
			d.wm = w
		}
		p.releaseThrough(d, now)
		// A store-and-forward burst larger than the buffer: releasing the
		// oldest is the only choice that loses nothing. It is the earliest
		// stamp still pending, so the evaluated prefix stays in order;
		// only pings stamped before it that arrive later become late.
		for len(d.buf) > p.cfg.BufferCap {
			arrived := d.buf[0].Ping(&p.ping, d.id)
			d.buf.Pop()
			p.buffered--
			p.m.Overflow.Inc()
			d.wm = max(d.wm, p.ping.Event)
			p.evaluate(d, &p.ping, arrived, now)
		}
	case h.Event > d.done && !(burst && p.cfg.History > 0):
		// Behind the watermark but after everything committed, and the
		// buffer holds only pings after the watermark: it is next (unless
		// older ones of its burst are still to come: then it is placed
		// with them).
		p.evaluate(d, &p.ping, h.Ping(&p.ping, d.id), now)
	case p.cfg.History > 0:
		p.deferLate(d, h, now)
	default:
		h.Ping(&p.ping, d.id)
		p.late = engine.Late{Ping: p.ping, Reason: engine.LateBehindWatermark, Watermark: d.wm}
		p.m.Late.Inc()
		p.sink.Late(&p.late)
	}
}

// releaseThrough hands every buffered ping at or before the watermark to
// the state machine, in event order.
func (p *Processor) releaseThrough(d *device, now int64) {
	for len(d.buf) > 0 && d.buf[0].Event <= d.wm {
		arrived := d.buf[0].Ping(&p.ping, d.id)
		d.buf.Pop()
		p.buffered--
		p.evaluate(d, &p.ping, arrived, now)
	}
}

// Advance releases every ping whose hold has elapsed by now. Releasing a
// ping on its deadline moves its device's watermark to the ping's event
// time, so the pings stamped before it go first and later ones are late.
// It reconciles the late batches due by now, and decides the DWELL timers
// of silent devices due by now (see settleDwell).
func (p *Processor) Advance(now time.Time) {
	n := p.at(now)
	for {
		next, ok := p.next()
		if !ok || next > n {
			return
		}
		if p.dwells.Len() > 0 && p.dwells.Next() == next {
			d := p.dwells.Pop().Of
			for i := range d.states {
				d.states[i].Timer = false // queued again if still to come
			}
			p.settleDwell(d, n, true)
			continue
		}
		d := p.timers.Pop().Of
		p.advance(d, n)
		p.settleDwell(d, n, true)
	}
}

// next returns the earliest queued deadline, hold or DWELL.
func (p *Processor) next() (int64, bool) {
	switch {
	case p.dwells.Len() == 0:
		if p.timers.Len() == 0 {
			return 0, false
		}
		return p.timers.Next(), true
	case p.timers.Len() == 0:
		return p.dwells.Next(), true
	}
	return min(p.timers.Next(), p.dwells.Next()), true
}

// advance does what a deadline of d asks at n: releases its pings whose
// hold has elapsed, and reconciles its late batch when it is due.
func (p *Processor) advance(d *device, n int64) {
	// The buffer first: a late batch is placed among what its hold
	// has committed by now.
	if len(d.buf) > 0 {
		for i := range d.buf {
			if d.buf[i].Deadline() <= n {
				d.wm = max(d.wm, d.buf[i].Event)
			}
		}
		p.releaseThrough(d, n)
	}
	if d.Late == nil {
		return
	}
	wait := int64(p.cfg.HistoryWait)
	if d.lateDue(n, wait) {
		p.reconcileLate(d, n, false)
		return
	}
	next := min(d.Late.Last+wait, d.Late.First+4*wait)
	if next <= n { // due, but a step is being told: look again soon
		next = min(n+wait/4, d.Late.First+8*wait)
	}
	p.timers.Push(next, d)
}

// AdvanceThrough is Advance at each deadline up to now, at that
// deadline's own instant: what a processor whose owner fires every
// deadline on time decides (serve's shards do), for an owner that only
// gets to run when a message comes (a replay, a scale-out partition).
// Advance(now) alone would decide a late batch or a hold due earlier as
// of now, and when a batch is placed depends on that instant.
func (p *Processor) AdvanceThrough(now time.Time) {
	n := p.at(now)
	// Advance(at) takes every deadline at or before at, and what it
	// queues again lies after it: each round moves on.
	for next, ok := p.next(); ok && next < n; next, ok = p.next() {
		p.Advance(p.base.Add(time.Duration(next)))
	}
	p.Advance(now)
}

// NextDeadline returns the earliest instant at which Advance has work, if
// any. It may be early (a stale entry); never late.
func (p *Processor) NextDeadline() (time.Time, bool) {
	next, ok := p.next()
	if !ok {
		return time.Time{}, false
	}
	return p.base.Add(time.Duration(next)), true
}

// Sweep does the housekeeping that no ping triggers: eviction of devices
// idle past the idle timeout (their buffer memory is reclaimed; a device
// inside a fence keeps its fence state, so eviction never produces a
// duplicate ENTER) and the metrics of every device's clock and hold. It
// looks at every device. It decides no DWELL: a silent device's DWELL
// timer is a deadline of its own (Advance), so what is decided does not
// depend on how often the owner sweeps.
func (p *Processor) Sweep(now time.Time) {
	p.cursor = 0
	p.census.Restart()
	p.SweepStep(now, math.MaxInt)
}

// SweepStep is Sweep in steps: it looks at up to budget devices from where
// the round's last step stopped and reports whether the round is over (the
// next step starts another). An owner that sweeps a shard of many devices
// in steps lets pings in between: a round over 10,000 devices took 1.4-2.9
// ms, and the shard's pings waited for it.
func (p *Processor) SweepStep(now time.Time, budget int) bool {
	n := p.at(now)
	evicted := 0
	for ; budget > 0 && p.cursor < len(p.all); budget-- {
		d := p.all[p.cursor]
		p.census.Count(p.m, d.clk.State(), time.Duration(d.hold()))
		if len(d.buf) == 0 && d.Late == nil { // else its pings will be released within the hold anyway
			// DWELL timers are decided at their own deadlines, whatever
			// the sweep's cadence: it only queues one a state restored
			// without it lacks (settleDwell).
			p.settleDwell(d, n, false)
			// Idle: no ping has advanced its clock for the idle timeout (a
			// device sending only late pings is idle too).
			if n-d.highAt >= int64(p.cfg.IdleTimeout) {
				if !d.states.Inside() {
					p.census.Uncount(d.clk.State())
					p.remove(d) // the last device takes its slot: looked at next
					evicted++
					continue
				}
				d.buf, d.Points = nil, nil
				d.states = d.states.Compact()
			}
		}
		p.cursor++
	}
	p.m.Evicted.Add(evicted)
	if p.cursor < len(p.all) {
		return false
	}
	p.cursor = 0
	p.census.Publish(p.m)
	return true
}

// remove drops d from the devices, keeping the sweep's round whole: the
// devices it has not looked at this round stay at or after its cursor.
func (p *Processor) remove(d *device) {
	i := int(d.slot)
	if i < p.cursor {
		// Fill the hole with the last device looked at, and move the
		// hole to the cursor.
		p.cursor--
		p.all[i] = p.all[p.cursor]
		p.all[i].slot = int32(i)
		i = p.cursor
	}
	last := len(p.all) - 1
	if i != last { // the last slot may hold the device just moved out of it
		p.all[i] = p.all[last]
		p.all[i].slot = int32(i)
	}
	p.all[last] = nil
	p.all = p.all[:last]
	delete(p.devices, d.id)
	delete(p.owed, d)
	p.watched.Forget(d)
}

// Reconcile brings device state in line with the current fence set after
// a swap: a device inside a fence that no longer exists gets its EXIT now
// (Reason ReasonFenceRemoved), at its estimated clock, whose instant then
// bounds what is late. Fences that stayed keep every device's state; a
// changed geometry is re-evaluated at each device's next ping, and so is a
// new fence (a device parked inside one gets its ENTER with its next ping).
func (p *Processor) Reconcile(now time.Time) {
	set := p.fences()
	n := p.at(now)
	for _, d := range p.devices {
		gone := false
		for i := range d.states {
			if d.states[i].Inside && set.ByID(d.states[i].Fence) == nil {
				gone = true
				break
			}
		}
		if !gone {
			continue
		}
		at := now.UnixNano()
		if d.high != noTime {
			at = d.estimate(n)
		}
		at = max(at, d.wm)
		d.wm, d.done = at, max(d.done, at)
		k := 0
		for _, st := range d.states {
			if !st.Inside || set.ByID(st.Fence) != nil {
				d.states[k] = st
				k++
				continue
			}
			p.out = engine.Transition{
				Device: d.id, Fence: st.Fence, Type: engine.Exit, Event: at,
				Lat: history.Degrees(d.lat), Lon: history.Degrees(d.lon), Ingest: now, Decided: now,
				Timer: true, Reason: engine.ReasonFenceRemoved,
			}
			p.m.Transitions[engine.Exit].Inc()
			p.sink.Transition(&p.out)
		}
		clear(d.states[k:])
		d.states = d.states[:k]
	}
}

// Forget drops a device's buffer and state without evaluating its
// buffered pings (a deprovisioned device; a simulator done with one).
func (p *Processor) Forget(id string) {
	if d := p.devices[id]; d != nil {
		p.buffered -= len(d.buf)
		d.buf = nil    // its queued deadlines are now stale
		d.states = nil // … its DWELL timer's too
		if d.Late != nil {
			p.deferred -= len(d.Late.Pings)
			p.freeBatch(d)
		}
		p.remove(d)
	}
}

// Flush releases every buffered ping in event order, as on shutdown.
func (p *Processor) Flush(now time.Time) {
	n := p.at(now)
	for _, d := range p.devices {
		if d.Late != nil {
			p.reconcileLate(d, n, true)
		}
		for i := range d.buf {
			d.wm = max(d.wm, d.buf[i].Event)
		}
		p.releaseThrough(d, n)
		for i := range d.states {
			d.states[i].Timer = false
		}
	}
	p.timers.Reset()
	p.dwells.Reset()
}

// Restore sets a device's state in a fence from a committed transition (as
// persisted on the retained topics), before its pings arrive, so that a
// restart does not repeat an ENTER. Pings stamped at or before event are
// then late: they would rewrite committed history.
func (p *Processor) Restore(device, fenceID string, typ engine.Type, event int64) {
	d := p.device(device)
	d.wm = max(d.wm, event)
	d.done = max(d.done, event)
	d.high = max(d.high, event)
	d.trimmed = true // what came before the restored state is not known
	d.states.Restore(strings.Clone(fenceID), typ == engine.Exit, typ == engine.Dwell, event)
}
