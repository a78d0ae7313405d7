package evaluator

import (
	"slices"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/gate"
	"github.com/edgefence/edgefence/evaluator/history"
	"github.com/edgefence/edgefence/evaluator/presence"
	"github.com/edgefence/edgefence/evaluator/reorder"
)

// evaluate runs the state machine on the device's next in-order ping.
// Within one ping, DWELLs that came due (at earlier instants) come first,
// then EXITs, then ENTERs, so a ping that leaves one fence for another
// reads as EXIT before ENTER. arrived is when the ping arrived, for the
// latency figures.
func (p *Processor) evaluate(d *device, pg *engine.Ping, arrived, now int64) {
	p.m.Released.Inc()
	before := d.done
	f := gate.PingFix(pg)
	if p.cfg.MaxSpeed > 0 && d.gate.Judge(p.cfg.MaxSpeed, f) {
		// An impossible jump: counted and kept, marked, it changes nothing.
		p.m.Gated.Inc()
		p.commit(d, pg, nil, nil, f.Mark(true))
		return
	}
	mark := f.Mark(false)
	if pg.HasAcc && pg.Acc > 0 && pg.Acc <= p.cfg.MaxAccuracy && d.spot.Observe(f.Event, f.Lat, f.Lon, f.Acc) {
		mark |= history.GateStill
	}
	hits := p.search.Contains(p.fences(), pg.Lat, pg.Lon)
	eff := hits
	if pg.HasAcc && pg.Acc > 0 {
		eff = p.edges(d, pg, hits, &mark)
	}
	p.commit(d, pg, hits, eff, mark)
	hits = eff
	p.m.ReleaseLatency.Observe(time.Duration(now - arrived))
	d.seq++

	p.dues = p.dues[:0]
	// A backlog burst is coming into the late batch (newest-first, after
	// the fresh ping it began with): its older pings are still to come.
	burst := d.Late != nil && now-d.Late.Last < clock.BurstGap
	for i := range d.states {
		st := &d.states[i]
		if !st.Inside || st.Dwelled {
			continue
		}
		if f := fence.Find(hits, st.Fence); f != nil {
			if dw, ok := f.DwellOf(p.cfg.Dwell); ok {
				// (A late ping waiting to be placed before the dwell's end
				// may yet show the device left: then it waits too; so does
				// one that came due since the ping before while a burst
				// comes in, for the burst's older pings.)
				if due := d.clk.After(st.Enter, dw); due <= pg.Event && !d.LateBefore(due) && !(burst && due > before) {
					p.dues = append(p.dues, presence.Due{I: i, At: due})
				}
			}
		} else if f := p.fences().ByID(st.Fence); f != nil && d.holdUs > 0 {
			// Leaving now: a DWELL that came due at an earlier ping and
			// waited for late pings goes out before the EXIT, historic,
			// or, while one stamped before it still waits, is owed.
			if dw, ok := f.DwellOf(p.cfg.Dwell); ok {
				if due := d.clk.After(st.Enter, dw); due <= before {
					if st.Owed = d.LateBefore(due); !st.Owed {
						p.dues = append(p.dues, presence.Due{I: i, At: due})
					}
				} else if due < pg.Event && d.LateBefore(pg.Event) {
					// Due after the last committed ping inside, before this
					// one: late pings waiting may show the device was still
					// inside at the dwell's instant. Owed on that proof.
					p.owed.Add(d, presence.Owed{Fence: st.Fence, Enter: st.Enter, At: due, Until: pg.Event, Proof: true})
				}
			}
		}
	}
	if d.holdUs > 0 { // arrival order is the baseline: its DWELLs stay as they come
		p.overdueDwells(d, before, now)
	}
	p.fireDwells(d, pg, false, now)

	for i := range d.states {
		st := &d.states[i]
		if st.Inside && fence.Find(hits, st.Fence) == nil {
			st.Inside = false
			rev := st.Seq == d.seq-1
			st.Seq = d.seq
			p.emit(d, transition{fence: st.Fence, typ: engine.Exit, at: pg.Event, rev: rev}, pg, arrived, now)
		}
	}
	for _, f := range hits {
		i := d.states.Index(f.ID)
		if i >= 0 && d.states[i].Inside {
			continue
		}
		st := presence.State{Fence: f.ID, Enter: pg.Event, Seq: d.seq, Inside: true}
		rev := false
		if i >= 0 {
			rev = d.states[i].Seq == d.seq-1 // it left on the previous ping
			p.payOwed(d, i, now)
			d.states[i] = st
		} else {
			d.states.Insert(st)
		}
		p.emit(d, transition{fence: f.ID, typ: engine.Enter, at: pg.Event, rev: rev}, pg, arrived, now)
	}

	d.states.Prune(d.seq)
	d.lat, d.lon = history.Fixed(pg.Lat), history.Fixed(pg.Lon)
	d.acc = reorder.AccOf(pg.Acc)
}

// edges applies accuracy hysteresis (fence.Settle) to the fences
// containing pg, against the fences d is inside, then keeps the changes
// the fix may not make (fence.Hold: d stands still, or the fix before
// it disagrees), marking the point GateHeld when it kept one.
func (p *Processor) edges(d *device, pg *engine.Ping, hits []*fence.Fence, mark *history.Gate) []*fence.Fence {
	// Most pings change nothing: the fences containing them are those the
	// device is in (both sorted by ID). Then there is nothing to settle.
	if d.states.Same(hits) {
		return hits
	}
	p.inside = d.states.Fences(p.inside[:0], p.fences())
	p.eff = fence.Settle(p.eff, hits, p.inside, pg.Lat, pg.Lon, pg.Acc, p.cfg.AccuracyMargin, p.cfg.MaxAccuracy)
	if slices.Equal(p.eff, p.inside) {
		return p.eff
	}
	pr := fence.Prior{Still: *mark&history.GateStill != 0}
	// The fix before it among those that had come: the committed ones and
	// the late ones waiting to be placed (history.prior replays the same).
	wall, prev := pg.Ingest.UnixNano(), int64(noTime)
	for k := len(d.Points) - 1; k >= 0; k-- {
		if q := &d.Points[k]; !q.Aside() && q.Event <= pg.Event && q.Wall <= wall {
			prev, pr.PLat, pr.PLon, pr.PAcc = q.Event, history.Degrees(q.Lat), history.Degrees(q.Lon), float64(q.Acc)/10
			break
		}
	}
	if d.Late != nil {
		for k := range d.Late.Pings {
			if q := &d.Late.Pings[k]; q.Event > prev && q.Event <= pg.Event && q.Wall <= wall {
				prev, pr.PLat, pr.PLon, pr.PAcc = q.Event, history.Quantize(q.Lat), history.Quantize(q.Lon), float64(q.Acc)/10
			}
		}
	}
	pr.Prev = prev != noTime && pg.Event-prev <= int64(fence.ConfirmWithin)
	p.held = fence.Hold(p.held, p.eff, p.inside, pg.Lat, pg.Lon, pg.Acc, p.cfg.AccuracyMargin, p.cfg.MaxAccuracy, &pr)
	if !slices.Equal(p.held, p.eff) {
		*mark |= history.GateHeld
	}
	return p.held
}

// fireDwells emits the DWELLs in p.dues in event-time order, caused by
// pg (its position, clamp and arrival), or, for a timer, by none.
func (p *Processor) fireDwells(d *device, pg *engine.Ping, timer bool, now int64) {
	presence.SortDues(p.dues)
	for _, u := range p.dues {
		st := &d.states[u.I]
		st.Dwelled = true
		p.out = engine.Transition{
			Device: d.id, Fence: st.Fence, Type: engine.Dwell, Event: u.At,
			Lat: pg.Lat, Lon: pg.Lon, Clamp: pg.Clamp, Ingest: pg.Ingest, Timer: timer,
			Stamp: u.At + d.clk.Shift(), Offset: d.clk.OffAt(u.At) + d.clk.Shift(),
			Decided: p.base.Add(time.Duration(now)),
		}
		p.m.Transitions[engine.Dwell].Inc()
		p.sink.Transition(&p.out)
	}
}

// emit publishes t, caused by pg, which arrived at processor instant
// arrived.
func (p *Processor) emit(d *device, t transition, pg *engine.Ping, arrived, now int64) {
	p.out = engine.Transition{
		Device: d.id, Fence: t.fence, Type: t.typ, Event: t.at,
		Lat: pg.Lat, Lon: pg.Lon, Acc: float64(reorder.AccOf(pg.Acc)) / 10, Clamp: pg.Clamp, Source: pg.Source, Ingest: pg.Ingest, Reversal: t.rev,
		Stamp: pg.Stamp, Offset: d.clk.OffAt(t.at) + d.clk.Shift(),
		Decided: p.base.Add(time.Duration(now)),
	}
	p.m.Transitions[t.typ].Inc()
	if t.rev {
		p.m.Reversals.Inc()
	}
	p.m.DecideLatency.Observe(time.Duration(now - arrived))
	p.sink.Transition(&p.out)
}

// settleDwell decides the DWELL timers of d at processor instant now.
// Each stay's DWELL gets one deadline at a time (p.dwells, st.Timer): when
// the device's estimated clock has passed its instant by the hold (a ping
// stamped before it may be on its way for the hold, as any other), and,
// for a device that went silent while moving, when it has been silent for
// the idle timeout as well (it is in an outage more often than parked:
// its next ping or the backlog it sends decides). It is queued when the
// device is first silent (nothing buffered, no late batch) after the stay
// began or after its last deadline came; pings since that move the
// estimate back get a new one when it comes, and ones that move it
// forward do not make it come sooner. When it comes, the DWELL is decided
// if the device is silent, or else the first time it is silent after. The
// engine calls it whenever d may have gone silent or its deadline came,
// never from a sweep (unless not fire: then it only queues, a safety net
// for a state restored without a deadline), so what is decided, and when,
// does not depend on how often the owner sweeps (issue 23). The watermark
// moves to each DWELL's instant: a ping stamped before it would otherwise
// come out after it.
func (p *Processor) settleDwell(d *device, now int64, fire bool) {
	if d.high == noTime || len(d.buf) > 0 || d.Late != nil {
		return // its pings' deadlines bring it back here
	}
	var set *fence.Set
	parked := 0 // not yet known
	p.dues = p.dues[:0]
	for i := range d.states {
		st := &d.states[i]
		if !st.Inside || st.Dwelled || st.Timer {
			continue // (the cheap test: most devices' every ping comes here)
		}
		if set == nil {
			set = p.fences()
		}
		f := set.ByID(st.Fence)
		if f == nil {
			continue // removed: its EXIT comes with the next ping
		}
		dw, ok := f.DwellOf(p.cfg.Dwell)
		if !ok {
			continue
		}
		due := d.clk.After(st.Enter, dw)
		at := d.highAt + (due + d.hold() - d.high)
		if parked == 0 {
			parked = 1
			if !d.Parked() {
				parked = 2
			}
		}
		if parked == 2 {
			at = max(at, d.highAt+int64(p.cfg.IdleTimeout))
		}
		if fire && at <= now {
			p.dues = append(p.dues, presence.Due{I: i, At: due})
			d.wm = max(d.wm, due)
			d.done = max(d.done, due)
			continue
		}
		st.Timer = true
		p.dwells.Push(at, d)
	}
	if len(p.dues) > 0 {
		// Caused by no ping: at the device's last position, now.
		cause := engine.Ping{Lat: history.Degrees(d.lat), Lon: history.Degrees(d.lon), Ingest: p.base.Add(time.Duration(now))}
		p.fireDwells(d, &cause, true, now)
	}
}
