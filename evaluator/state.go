package evaluator

import (
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/fence"
)

// due is a DWELL that has come due: the state index and its event time.
type due struct {
	i  int
	at int64
}

// dwellOf returns a fence's dwell time, or false when DWELL is off for it.
func (p *Processor) dwellOf(f *fence.Fence) (int64, bool) {
	dw := p.cfg.Dwell
	if f.HasDwell {
		dw = f.Dwell
	}
	return int64(dw), dw > 0
}

// evaluate runs the state machine on the device's next in-order ping.
// Within one ping, DWELLs that came due (at earlier instants) come first,
// then EXITs, then ENTERs, so a ping that leaves one fence for another
// reads as EXIT before ENTER.
func (p *Processor) evaluate(d *device, pg *Ping, now int64) {
	p.m.Released.Inc()
	before := d.done
	p.commit(d, pg)
	p.m.ReleaseLatency.Observe(time.Duration(now - pg.arrived))
	d.seq++
	hits := p.search.Contains(p.fences(), pg.Lat, pg.Lon)
	if pg.HasAcc && pg.Acc > 0 {
		hits = p.edges(d, pg, hits)
	}

	p.dues = p.dues[:0]
	for i := range d.states {
		st := &d.states[i]
		if !st.inside || st.dwelled {
			continue
		}
		if f := find(hits, st.fence); f != nil {
			if dw, ok := p.dwellOf(f); ok && st.enter+dw <= pg.Event && !d.lateBefore(st.enter+dw) {
				// (A late ping waiting to be placed before the dwell's end
				// may yet show the device left: then it waits too.)
				p.dues = append(p.dues, due{i, st.enter + dw})
			}
		} else if f := p.fences().ByID(st.fence); f != nil && d.holdUs > 0 {
			// Leaving now: a DWELL that came due at an earlier ping and
			// waited for late pings goes out before the EXIT, historic.
			if dw, ok := p.dwellOf(f); ok && st.enter+dw <= before {
				p.dues = append(p.dues, due{i, st.enter + dw})
			}
		}
	}
	if d.holdUs > 0 { // arrival order is the baseline: its DWELLs stay as they come
		p.overdueDwells(d, before, now)
	}
	p.fireDwells(d, pg.Lat, pg.Lon, pg.Clamp, pg.Ingest, false, now)

	for i := range d.states {
		st := &d.states[i]
		if st.inside && find(hits, st.fence) == nil {
			st.inside = false
			rev := st.seq == d.seq-1
			st.seq = d.seq
			p.emit(d, st.fence, Exit, pg.Event, pg, rev, now)
		}
	}
	for _, f := range hits {
		i := d.state(f.ID)
		if i >= 0 && d.states[i].inside {
			continue
		}
		st := fenceState{fence: f.ID, enter: pg.Event, seq: d.seq, inside: true}
		rev := false
		if i >= 0 {
			rev = d.states[i].seq == d.seq-1 // it left on the previous ping
			d.states[i] = st
		} else {
			d.insertState(st)
		}
		p.emit(d, f.ID, Enter, pg.Event, pg, rev, now)
	}

	// Outside states matter only to the next ping, for reversal counting.
	k := 0
	for _, st := range d.states {
		if st.inside || st.seq == d.seq {
			d.states[k] = st
			k++
		}
	}
	clear(d.states[k:])
	d.states = d.states[:k]
	d.lat, d.lon = fixed(pg.Lat), fixed(pg.Lon)
}

// edges applies accuracy hysteresis (fence.Settle) to the fences
// containing pg, against the fences d is inside.
func (p *Processor) edges(d *device, pg *Ping, hits []*fence.Fence) []*fence.Fence {
	// Most pings change nothing: the fences containing them are those the
	// device is in (both sorted by ID). Then there is nothing to settle.
	k, same := 0, true
	for i := range d.states {
		if st := &d.states[i]; st.inside {
			if k == len(hits) || hits[k].ID != st.fence {
				same = false
				break
			}
			k++
		}
	}
	if same && k == len(hits) {
		return hits
	}
	p.inside = p.inside[:0]
	set := p.fences()
	for i := range d.states {
		if st := &d.states[i]; st.inside {
			if f := set.ByID(st.fence); f != nil {
				p.inside = append(p.inside, f)
			}
		}
	}
	p.eff = fence.Settle(p.eff, hits, p.inside, pg.Lat, pg.Lon, pg.Acc, p.cfg.AccuracyMargin, p.cfg.MaxAccuracy)
	return p.eff
}

// settledAt sets p.prev to the fences d was in at its committed point a,
// hist[j], under accuracy hysteresis: a fix near an edge kept the state
// the fixes before it had set, so they are replayed from the last point
// whose position alone decided (one without accuracy, or the oldest). A
// point that is not hist[j] counts at its position alone.
func (p *Processor) settledAt(d *device, a *point, j int, set *fence.Set) {
	if j < 0 || j >= len(d.hist) || &d.hist[j] != a {
		p.prev = append(p.prev[:0], p.search.Contains(set, degrees(a.lat), degrees(a.lon))...)
		return
	}
	i := j
	for i > 0 && d.hist[i].acc != 0 {
		i--
	}
	h := &d.hist[i]
	p.prev = append(p.prev[:0], p.search.Contains(set, degrees(h.lat), degrees(h.lon))...)
	for i++; i <= j; i++ {
		h = &d.hist[i]
		lat, lon := degrees(h.lat), degrees(h.lon)
		p.eff = fence.Settle(p.eff, p.search.Contains(set, lat, lon), p.prev, lat, lon, float64(h.acc)/10, p.cfg.AccuracyMargin, p.cfg.MaxAccuracy)
		p.prev, p.eff = p.eff, p.prev
	}
}

// find returns the fence with id among hits, or nil.
func find(hits []*fence.Fence, id string) *fence.Fence {
	for _, f := range hits {
		if f.ID == id {
			return f
		}
	}
	return nil
}

// fireDwells emits the DWELLs in p.dues in event-time order.
func (p *Processor) fireDwells(d *device, lat, lon float64, clamp clock.ClampReason, ingest time.Time, timer bool, now int64) {
	dues := p.dues
	for i := 1; i < len(dues); i++ { // insertion sort: almost always 0 or 1 entries
		for j := i; j > 0 && dues[j].at < dues[j-1].at; j-- {
			dues[j], dues[j-1] = dues[j-1], dues[j]
		}
	}
	for _, u := range dues {
		st := &d.states[u.i]
		st.dwelled = true
		p.out = Transition{
			Device: d.id, Fence: st.fence, Type: Dwell, Event: u.at,
			Lat: lat, Lon: lon, Clamp: clamp, Ingest: ingest, Timer: timer,
			Stamp: u.at + d.clk.Shift(), Offset: d.clk.Off() + d.clk.Shift(),
			Decided: p.base.Add(time.Duration(now)),
		}
		p.m.Transitions[Dwell].Inc()
		p.sink.Transition(&p.out)
	}
}

func (p *Processor) emit(d *device, fenceID string, typ Type, event int64, pg *Ping, rev bool, now int64) {
	p.out = Transition{
		Device: d.id, Fence: fenceID, Type: typ, Event: event,
		Lat: pg.Lat, Lon: pg.Lon, Clamp: pg.Clamp, Source: pg.Source, Ingest: pg.Ingest, Reversal: rev,
		Stamp: pg.Stamp, Offset: d.clk.Off() + d.clk.Shift(),
		Decided: p.base.Add(time.Duration(now)),
	}
	p.m.Transitions[typ].Inc()
	if rev {
		p.m.Reversals.Inc()
	}
	p.m.DecideLatency.Observe(time.Duration(now - pg.arrived))
	p.sink.Transition(&p.out)
}

// dwellTimers fires the DWELLs of a silent, parked device whose
// estimated clock has passed them. A device that went silent while
// moving is in an outage more often than parked: its next ping, or the
// backlog it sends, decides its DWELL. The watermark moves to each DWELL's instant: a ping
// stamped before it would otherwise come out after it.
func (p *Processor) dwellTimers(d *device, now int64) {
	if d.high == noTime || !d.parked() {
		return
	}
	est := d.estimate(now)
	var set *fence.Set
	p.dues = p.dues[:0]
	for i := range d.states {
		st := &d.states[i]
		if !st.inside || st.dwelled {
			continue
		}
		if set == nil {
			set = p.fences()
		}
		f := set.ByID(st.fence)
		if f == nil {
			continue // removed: its EXIT comes with the next ping
		}
		if dw, ok := p.dwellOf(f); ok && st.enter+dw <= est {
			p.dues = append(p.dues, due{i, st.enter + dw})
			d.wm = max(d.wm, st.enter+dw)
			d.done = max(d.done, st.enter+dw)
		}
	}
	if len(p.dues) > 0 {
		p.fireDwells(d, degrees(d.lat), degrees(d.lon), clock.ClampNone, p.base.Add(time.Duration(now)), true, now)
	}
}
