package evaluator

import (
	"math"
	"strings"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
)

// Processor is the engine for the devices of one shard: reorder buffers,
// watermarks and the state machine, driven by explicit instants so that it
// runs the same in real time (a shard goroutine) and in virtual time (the
// simulator). It is not safe for concurrent use: one owner, no locks.
type Processor struct {
	cfg    Config
	base   time.Time // origin of processor-relative instants
	fences func() *fence.Set
	sink   Sink
	m      *Metrics
	search *fence.Searcher

	devices  map[string]*device
	all      []*device // every device, for the sweep: device.slot is its index
	cursor   int       // the sweep's next index in all; those before it are swept this round
	timers   deadlines
	buffered int

	// scratch, reused so the per-ping path does not allocate
	ping Ping
	out  Transition
	late Late
	dues []due
}

// NewProcessor returns a processor whose instants count from base. fences
// is called for every evaluation and must return the current snapshot.
func NewProcessor(cfg Config, base time.Time, fences func() *fence.Set, sink Sink, m *Metrics) (*Processor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if m == nil {
		m = NewMetrics(nil)
	}
	return &Processor{
		cfg:     cfg,
		base:    base,
		fences:  fences,
		sink:    sink,
		m:       m,
		search:  fence.NewSearcher(),
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
		d = &device{id: strings.Clone(id), high: noTime, wm: noTime, holdUs: int32(p.cfg.Hold / time.Microsecond), slot: int32(len(p.all))}
		p.devices[d.id] = d
		p.all = append(p.all, d)
	}
	return d
}

// SetHold sets one device's allowed lateness (a device with an unstable
// clock may need more than the default), capped at MaxHold.
func (p *Processor) SetHold(id string, hold time.Duration) {
	d := p.device(id)
	d.holdUs = int32(min(max(hold, 0), MaxHold) / time.Microsecond)
	// The queued deadlines were computed with the old hold: queue the new ones.
	for i := range d.buf {
		p.timers.push(d.buf[i].arrived+d.hold(), d)
	}
}

// Ingest takes one ping. It is buffered, released at once (if the watermark
// already passed it or arrival-order evaluation is on), or diverted to the
// late output. Call Advance afterwards to release pings whose hold expired.
func (p *Processor) Ingest(pg *Ping) {
	now := p.at(pg.Ingest)
	pg.arrived = now
	d := p.device(pg.Device)
	wall := pg.Ingest.UnixNano()
	if d.wm != noTime {
		p.m.WatermarkLag.Observe(time.Duration(wall - d.wm))
	}
	if d.holdUs == 0 {
		// Arrival order: no buffer, so nothing can be late either.
		p.raise(d, pg, wall, now)
		pg.Device = d.id
		p.release(d, pg, now)
		return
	}
	if pg.Event <= d.wm {
		p.late = Late{Ping: *pg, Reason: LateBehindWatermark, Watermark: d.wm}
		p.m.Late.Inc()
		p.sink.Late(&p.late)
		return
	}
	pg.Device = d.id // buffered copies share the device's string
	d.buf.push(pg, wall)
	p.buffered++
	// One deadline per buffered ping: they come in arrival order, so the
	// queue is a FIFO (see deadlines).
	p.timers.push(now+d.hold(), d)
	p.raise(d, pg, wall, now)
	if w := d.high - d.hold(); w > d.wm {
		d.wm = w
	}
	p.releaseThrough(d, now)
	// A store-and-forward burst larger than the buffer: releasing the oldest
	// is the only choice that loses nothing. It is the earliest stamp still
	// pending, so the evaluated prefix stays in order; only pings stamped
	// before it that arrive later become late.
	for len(d.buf) > p.cfg.BufferCap {
		d.buf.pop(&p.ping, d.id)
		p.buffered--
		p.m.Overflow.Inc()
		d.wm = max(d.wm, p.ping.Event)
		p.release(d, &p.ping, now)
	}
}

// raise moves the high-water mark. It never passes the ingest wall time,
// so one clamped or future stamp cannot make later good pings late.
func (p *Processor) raise(d *device, pg *Ping, wall, now int64) {
	if hw := min(pg.Event, wall); hw > d.high {
		d.high = hw
		d.highAt = now
	}
}

// releaseThrough hands every buffered ping at or before the watermark to
// the state machine, in event order.
func (p *Processor) releaseThrough(d *device, now int64) {
	for len(d.buf) > 0 && d.buf[0].event <= d.wm {
		d.buf.pop(&p.ping, d.id)
		p.buffered--
		p.release(d, &p.ping, now)
	}
}

// Advance releases every ping whose hold has elapsed by now. Releasing a
// ping on its deadline moves its device's watermark to the ping's event
// time, so the pings stamped before it go first and later ones are late.
func (p *Processor) Advance(now time.Time) {
	n := p.at(now)
	for p.timers.len() > 0 && p.timers.next() <= n {
		d := p.timers.pop().dev
		if len(d.buf) == 0 {
			continue // released by the watermark since, or forgotten
		}
		hold := d.hold()
		for i := range d.buf {
			if d.buf[i].arrived+hold <= n {
				d.wm = max(d.wm, d.buf[i].event)
			}
		}
		p.releaseThrough(d, n)
	}
}

// NextDeadline returns the earliest instant at which Advance has work, if
// any. It may be early (a stale entry); never late.
func (p *Processor) NextDeadline() (time.Time, bool) {
	if p.timers.len() == 0 {
		return time.Time{}, false
	}
	return p.base.Add(time.Duration(p.timers.next())), true
}

// Sweep does the housekeeping that no ping triggers: DWELL timers of silent
// devices, and eviction of devices idle past the idle timeout (their buffer
// memory is reclaimed; a device inside a fence keeps its fence state, so
// eviction never produces a duplicate ENTER). It looks at every device.
func (p *Processor) Sweep(now time.Time) {
	p.cursor = 0
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
		if len(d.buf) == 0 { // else its pings will be released within the hold anyway
			p.dwellTimers(d, n)
			// Idle: no ping has advanced its clock for the idle timeout (a
			// device sending only late pings is idle too).
			if n-d.highAt >= int64(p.cfg.IdleTimeout) {
				if !d.inside() {
					p.remove(d) // the last device takes its slot: looked at next
					evicted++
					continue
				}
				d.buf = nil
				d.states = compactStates(d.states)
			}
		}
		p.cursor++
	}
	p.m.Evicted.Add(evicted)
	if p.cursor < len(p.all) {
		return false
	}
	p.cursor = 0
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
		p.move(p.cursor, i)
		i = p.cursor
	}
	last := len(p.all) - 1
	if i != last { // the last slot may hold the device just moved out of it
		p.move(last, i)
	}
	p.all[last] = nil
	p.all = p.all[:last]
	delete(p.devices, d.id)
}

func (p *Processor) move(from, to int) {
	d := p.all[from]
	p.all[to] = d
	d.slot = int32(to)
}

// compactStates drops lingering outside states and spare capacity.
func compactStates(s []fenceState) []fenceState {
	out := make([]fenceState, 0, len(s))
	for _, st := range s {
		if st.inside {
			out = append(out, st)
		}
	}
	return out
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
			if d.states[i].inside && set.ByID(d.states[i].fence) == nil {
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
		d.wm = at
		k := 0
		for _, st := range d.states {
			if !st.inside || set.ByID(st.fence) != nil {
				d.states[k] = st
				k++
				continue
			}
			p.out = Transition{
				Device: d.id, Fence: st.fence, Type: Exit, Event: at,
				Lat: float64(d.lat), Lon: float64(d.lon), Ingest: now, Decided: now,
				Timer: true, Reason: ReasonFenceRemoved,
			}
			p.m.Transitions[Exit].Inc()
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
		d.buf = nil // its queued deadlines are now stale
		p.remove(d)
	}
}

// Flush releases every buffered ping in event order, as on shutdown.
func (p *Processor) Flush(now time.Time) {
	n := p.at(now)
	for _, d := range p.devices {
		for i := range d.buf {
			d.wm = max(d.wm, d.buf[i].event)
		}
		p.releaseThrough(d, n)
	}
	p.timers.reset()
}

// Restore sets a device's state in a fence from a committed transition (as
// persisted on the retained topics), before its pings arrive, so that a
// restart does not repeat an ENTER. Pings stamped at or before event are
// then late: they would rewrite committed history.
func (p *Processor) Restore(device, fenceID string, typ Type, event int64) {
	d := p.device(device)
	d.wm = max(d.wm, event)
	d.high = max(d.high, event)
	i := d.state(fenceID)
	if typ == Exit {
		if i >= 0 {
			d.states = append(d.states[:i], d.states[i+1:]...)
		}
		return
	}
	st := fenceState{fence: strings.Clone(fenceID), enter: event, inside: true, dwelled: typ == Dwell}
	if i >= 0 {
		st.enter = min(st.enter, d.states[i].enter)
		st.dwelled = st.dwelled || d.states[i].dwelled
		d.states[i] = st
		return
	}
	d.insertState(st)
}
