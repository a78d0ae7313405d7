package evaluator

import (
	"cmp"
	"math"
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

// commit records a released ping in the device's history (see
// history.History.Commit), its membership eff settled from hits, marked
// g by the speed gate, and moves what it has committed to the ping.
func (p *Processor) commit(d *device, pg *engine.Ping, hits, eff []*fence.Fence, g history.Gate) {
	d.done = max(d.done, pg.Event)
	if p.cfg.History <= 0 || d.holdUs == 0 {
		return
	}
	pt := history.PointOf(pg.Event, pg.Ingest.UnixNano(), pg.Lat, pg.Lon, reorder.AccOf(pg.Acc))
	pt.Record(hits, eff)
	pt.Gate = g
	if d.Commit(pt, int64(p.cfg.History), p.cfg.HistoryPoints) {
		d.trimmed = true
	}
}

// deferLate holds a late ping in its device's batch; the batch is reconciled
// once no late ping has come for HistoryWait.
func (p *Processor) deferLate(d *device, h *reorder.Held, now int64) {
	if d.Late == nil {
		d.Late = p.batches.Get()
	}
	d.Late.Add(h, now)
	p.deferred++
	p.timers.Push(now+int64(p.cfg.HistoryWait), d)
}

// undefer puts the pings of d's batch that belong to the generation a
// step by shift just began back on the live path, re-keyed
// (history.History.Rekey).
func (p *Processor) undefer(d *device, shift int64, now int64) {
	if d.Late == nil {
		return
	}
	p.redo, p.burst = d.Rekey(p.redo[:0], p.burst, d.buf, &d.clk, shift, d.high, max(clock.MinBehind, d.hold()))
	p.deferred -= len(p.redo)
	if len(d.Late.Pings) == 0 {
		p.freeBatch(d)
	}
	// A DWELL the moved pings held back is decided first, unless one comes
	// before it; they are placed in event order, so that none is taken
	// for late behind another.
	p.dwellsAfterReconcile(d, now)
	slices.SortStableFunc(p.redo, func(a, b reorder.Held) int { return cmp.Compare(a.Event, b.Event) })
	for i := range p.redo {
		h := &p.redo[i]
		p.placeLive(d, h, false, now)
	}
}

// freeBatch gives d's empty batch back to the pool.
func (p *Processor) freeBatch(d *device) {
	b := d.Late
	d.Late = nil
	p.batches.Put(b, 4*p.cfg.BufferCap)
	// What falls out of the history while the batch waited goes now.
	if d.Trim(int64(p.cfg.History), p.cfg.HistoryPoints) {
		d.trimmed = true
	}
}

// reconcileLate places d's batch into its history. Pings after everything
// committed go back to the live path; pings before the history go to the
// late output; the rest are merged in event order, and the transitions
// the merged history implies that were not published are published as
// historic ones. Unless final (nothing more is to come: a flush), the
// pings that may begin a step back wait for the next batch
// (keepStepPings).
func (p *Processor) reconcileLate(d *device, now int64, final bool) {
	if p.tellPendingStep(d, now) && d.Late == nil {
		return // every late ping was the step's
	}
	if !final {
		p.keepStepPings(d, now)
	}
	pings := d.Late.Pings
	p.burst = history.MendBursts(pings, d.Points, d.clk.Off(), p.burst)
	p.deferred -= len(pings)
	first, n := d.Place(pings)
	// Pings after the newest committed ping are the newest news: live
	// (only a timer's instant, such as a DWELL's, may lie after them).
	p.redo = append(p.redo[:0], pings[n:]...)
	pings = pings[:n]
	before := pings[:first]
	if first > 0 && len(d.Points) > 0 && !d.trimmed {
		// Before the device's first committed ping: nothing was before it.
		p.m.Reconciled.Add(first)
	} else {
		for i := range before {
			p.lost(d, &before[i]) // not kept: they were lost
		}
		before = nil
	}
	pings = pings[first:]
	start := -1 // before the first point
	if len(before) == 0 && len(pings) > 0 {
		start = 0 // the point before the first late ping
		for start+1 < len(d.Points) && d.Points[start+1].Event <= pings[0].Event {
			start++
		}
	}
	p.merged = history.Merge(p.merged[:0], before, d.Points, pings)
	p.m.Gated.Add(gate.Mark(p.cfg.MaxSpeed, p.merged)) // judged as they would have been live
	history.Stand(p.merged, p.cfg.MaxAccuracy, d.spot.Grow())
	if len(before)+len(pings) > 0 {
		p.reveal(d, start, now)
	}
	d.Points = append(d.Points[:0], history.Kept(p.merged)...)
	p.m.Reconciled.Add(len(pings))
	if len(p.keep) > 0 {
		p.refill(d, now)
	} else {
		p.freeBatch(d)
	}
	p.dwellsAfterReconcile(d, now)
	for i := range p.redo {
		if h := &p.redo[i]; h.Event > d.done {
			p.placeLive(d, h, false, now)
		} else {
			p.evaluate(d, &p.ping, h.Ping(&p.ping, d.id), now)
		}
	}
}

// refill makes the pings keepStepPings took out d's batch again, placed
// like the others when it is due. The history is not trimmed meanwhile:
// they are to be placed among its points.
func (p *Processor) refill(d *device, now int64) {
	d.Late.Refill(p.keep)
	p.deferred += len(p.keep)
	clear(p.keep)
	p.keep = p.keep[:0]
	p.timers.Push(now+int64(p.cfg.HistoryWait), d)
}

// keepStepPings takes out of d's batch, into p.keep, the pings that may
// begin a step back (history.Batch.TakeStepPings), when the batch is
// placed at its cap while late pings and live ones still come (see
// lateDue).
func (p *Processor) keepStepPings(d *device, now int64) {
	wait := int64(p.cfg.HistoryWait)
	b := d.Late
	if now-b.Last >= wait || d.highAt <= b.First || !d.clk.Learned() {
		return // quiet, or no live ping since it began: nothing tells a step
	}
	p.keep = b.TakeStepPings(p.keep, now, wait, d.clk.Off(), p.cfg.BehindTol(d.hold()))
	p.deferred -= len(p.keep)
}

// tellPendingStep confirms, before d's batch is placed, a step back that
// its pings agree on but no third ping came to confirm (the device went
// silent, or the stream ended): placed on the clock before the step, they
// would land among the pings fixed before it. It reports whether it did.
func (p *Processor) tellPendingStep(d *device, now int64) bool {
	shift0 := d.clk.Shift()
	if !d.clk.TellPending() {
		return false
	}
	d.markStep(shift0)
	p.m.Steps.Inc()
	p.undefer(d, d.clk.Shift()-shift0, now)
	return true
}

// lost sends a late ping that no history can place to the late output.
func (p *Processor) lost(d *device, h *reorder.Held) {
	var pg engine.Ping
	h.Ping(&pg, d.id)
	pg.Stamp, pg.HasStamp = h.Stamp, h.Clamp != clock.ClampMissing
	p.late = engine.Late{Ping: pg, Reason: engine.LateBeforeHistory, Watermark: d.wm}
	p.m.Late.Inc()
	p.sink.Late(&p.late)
}

// reveal publishes, as historic, what the late pings merged into d's
// history (p.merged) reveal (history.Changes.Of, from merged[start]),
// and makes d's live state follow a change that lasts.
func (p *Processor) reveal(d *device, start int, now int64) {
	m := p.merged
	rs := p.changes.Of(p.fences(), p.search, p.cfg.AccuracyMargin, p.cfg.MaxAccuracy, d.Points, !d.trimmed, start, m)
	for i := range d.states { // an owed DWELL whose stay the late pings end before it is not
		st := &d.states[i]
		st.Owed = st.Owed && !history.EndedBefore(rs, m, st.Fence, st.Enter, p.dwellAt(d, st))
	}
	p.owed.Settle(d, func(o presence.Owed) bool { return history.EndedBefore(rs, m, o.Fence, o.Enter, o.At) })
	for k, r := range rs {
		at := &m[r.At]
		until := history.StayEnd(rs, k, m)
		if r.Anchor >= 0 { // published at the anchor
			if r.Enter {
				p.staysFrom(d, stay{fence: r.Fence, enter: at.Event, until: until, anchor: &m[r.Anchor]}, now)
			}
			continue
		}
		typ := engine.Exit
		if r.Enter {
			typ = engine.Enter
		}
		p.historic(d, transition{fence: r.Fence.ID, typ: typ, at: at.Event}, at, now)
		dwelled := r.Enter && p.historicDwell(d, r.Fence, m[r.At:], now)
		switch {
		case r.Final && r.Enter:
			st := presence.State{Fence: r.Fence.ID, Enter: at.Event, Inside: true, Dwelled: dwelled}
			if i := d.states.Index(r.Fence.ID); i >= 0 {
				p.payOwed(d, i, now)
				d.states[i] = st
			} else {
				d.states.Insert(st)
			}
		case r.Final:
			d.states.Restore(r.Fence.ID, true, false, 0)
		case r.Enter:
			p.staysFrom(d, stay{fence: r.Fence, enter: at.Event, until: until, anchor: at, fresh: true, dwelled: dwelled}, now)
		}
	}
	p.publishRevealed()
}

// payOwed publishes, as historic, the DWELL owed to d's state i
// (presence.State.Owed), confirmed by the newest committed ping, as the
// state is replaced by a new stay. While a late ping stamped before it
// waits, it is owed apart (p.owed) until they are placed: where they land
// is known only then (a clock step may move them into the stay).
func (p *Processor) payOwed(d *device, i int, now int64) {
	st := &d.states[i]
	if !st.Owed {
		return // the common case, on every live ENTER: no fence lookup
	}
	st.Owed = false
	if at := p.dwellAt(d, st); d.LateBefore(at) {
		p.owed.Add(d, presence.Owed{Fence: st.Fence, Enter: st.Enter, At: at})
	} else if len(d.Points) > 0 {
		st.Dwelled = true
		p.historic(d, transition{fence: st.Fence, typ: engine.Dwell, at: at}, &d.Points[len(d.Points)-1], now)
	}
}

// dwellAt returns the instant of st's DWELL: its fence's dwell after its
// ENTER in true elapsed time (clock.Model.After; never, for a fence gone
// or without DWELL).
func (p *Processor) dwellAt(d *device, st *presence.State) int64 {
	if f := p.fences().ByID(st.Fence); f != nil {
		if dw, ok := f.DwellOf(p.cfg.Dwell); ok {
			return d.clk.After(st.Enter, dw)
		}
	}
	return math.MaxInt64
}

// stay is a stay under way in a fence that late pings revealed began
// elsewhere (see staysFrom): at enter, until it ended (until), inside
// since before the committed point anchor. A fresh stay is one after an
// EXIT and ENTER the late pings revealed, whose DWELL has come (dwelled)
// or not.
type stay struct {
	fence          *fence.Fence
	enter, until   int64
	anchor         *history.Point
	fresh, dwelled bool
}

// staysFrom tells d's state in s.fence, inside since before s.anchor,
// that the stay under way began at s.enter (late pings revealed the
// ENTER, or, when fresh, an EXIT and ENTER after the one it had): its
// DWELL counts from there, but comes no earlier than s.anchor, whose
// ENTER was published. One that this brings before what d committed is
// published now, as historic, unless the stay ended (s.until) before it
// or a ping kept for the next batch may end it: the pings since confirm
// it, and the live one would come out of order.
func (p *Processor) staysFrom(d *device, s stay, now int64) {
	i := d.states.Index(s.fence.ID)
	if i < 0 || !d.states[i].Inside || d.states[i].Enter > s.anchor.Event {
		return
	}
	st := &d.states[i]
	st.Enter = s.enter
	if s.fresh {
		st.Dwelled = s.dwelled
	}
	if dw, ok := s.fence.DwellOf(p.cfg.Dwell); ok {
		st.Enter = max(s.enter, s.anchor.Event-dw)
		if due := d.clk.After(st.Enter, dw); !st.Dwelled && due <= d.done && due < min(s.until, history.Earliest(p.keep)) {
			st.Dwelled = true
			p.historic(d, transition{fence: s.fence.ID, typ: engine.Dwell, at: due}, s.anchor, now)
		}
	}
}

// dwellsAfterReconcile publishes, as historic, the DWELLs that came due
// before what d committed while late pings were waiting (see evaluate):
// the device stayed inside through them. One that a ping stamped before
// it may yet cancel waits for it: a late one still in the batch, or one
// of p.redo, which are placed next.
func (p *Processor) dwellsAfterReconcile(d *device, now int64) {
	p.dues = p.dues[:0]
	wait := history.Earliest(p.redo)
	for i := range d.states {
		st := &d.states[i]
		if at := p.dwellAt(d, st); at < wait && !d.LateBefore(at) {
			if st.Owed {
				p.payOwed(d, i, now)
			} else if st.Inside && !st.Dwelled && at <= d.done {
				p.dues = append(p.dues, presence.Due{I: i, At: at})
			}
		}
	}
	p.payOwedApart(d, wait, now)
	p.overdueDwells(d, d.done, now)
}

// payOwedApart publishes, as historic, the DWELLs owed apart to d's
// replaced stays (see payOwed) that no late ping stamped before them
// waits for any more, nor a moved ping placed next (before wait).
func (p *Processor) payOwedApart(d *device, wait, now int64) {
	p.owed.Settle(d, func(o presence.Owed) bool {
		if o.Proof {
			if o.Until >= wait || d.LateBefore(o.Until) {
				return false
			}
			// Proved by a point inside at or after its instant, before
			// the stay ended (one the late pings ended before it was
			// dropped when they were placed).
			if f := p.fences().ByID(o.Fence); f != nil {
				if k := d.InsideBetween(f, o.At, o.Until); k >= 0 {
					p.historic(d, transition{fence: o.Fence, typ: engine.Dwell, at: o.At}, &d.Points[k], now)
				}
			}
			return true
		}
		if o.At >= wait || d.LateBefore(o.At) || len(d.Points) == 0 {
			return false
		}
		p.historic(d, transition{fence: o.Fence, typ: engine.Dwell, at: o.At}, &d.Points[len(d.Points)-1], now)
		return true
	})
}

// overdueDwells publishes, as historic, the DWELLs in p.dues that came due
// at or before done, what d had committed: they waited for late pings, and
// published live they would come out of order. It leaves the others in
// p.dues.
func (p *Processor) overdueDwells(d *device, done, now int64) {
	k := 0
	for _, u := range p.dues {
		if u.At > done {
			p.dues[k] = u
			k++
			continue
		}
		st := &d.states[u.I]
		st.Dwelled = true
		// Confirmed by the newest committed ping: its position and ingest.
		pt := history.PointOf(u.At, p.base.Add(time.Duration(now)).UnixNano(), history.Degrees(d.lat), history.Degrees(d.lon), 0)
		if n := len(d.Points); n > 0 {
			pt = d.Points[n-1]
		}
		p.historic(d, transition{fence: st.Fence, typ: engine.Dwell, at: u.At}, &pt, now)
	}
	p.dues = p.dues[:k]
	p.publishRevealed()
}

// historicDwell publishes the DWELL of a historic ENTER into f at
// pts[0], when the points from it show the device inside f for the
// fence's dwell and no ping kept for the next batch comes before it, and
// reports whether it did.
func (p *Processor) historicDwell(d *device, f *fence.Fence, pts []history.Point, now int64) bool {
	dw, ok := f.DwellOf(p.cfg.Dwell)
	if !ok {
		return false
	}
	due := d.clk.After(pts[0].Event, dw)
	if i := history.Stayed(p.fences(), p.search, f, pts, due); i >= 0 && due < history.Earliest(p.keep) {
		p.historic(d, transition{fence: f.ID, typ: engine.Dwell, at: due}, &pts[i], now)
		return true
	}
	return false
}

// historic publishes t, which late pings revealed, caused by the ping
// at pt.
func (p *Processor) historic(d *device, t transition, pt *history.Point, now int64) {
	p.out = engine.Transition{
		Device: d.id, Fence: t.fence, Type: t.typ, Event: t.at,
		Lat: history.Degrees(pt.Lat), Lon: history.Degrees(pt.Lon), Acc: float64(pt.Acc) / 10, Ingest: time.Unix(0, pt.Wall),
		Decided: p.base.Add(time.Duration(now)), Historic: true,
		Stamp: t.at + d.clk.Shift(), Offset: d.clk.OffAt(t.at) + d.clk.Shift(),
	}
	p.m.Historic[t.typ].Inc()
	p.revealed = append(p.revealed, p.out)
}

// publishRevealed sends the historic transitions of one run in event
// order (a DWELL may come due after another fence's change).
func (p *Processor) publishRevealed() {
	slices.SortStableFunc(p.revealed, func(a, b engine.Transition) int { return cmp.Compare(a.Event, b.Event) })
	for i := range p.revealed {
		p.sink.Transition(&p.revealed[i])
	}
	clear(p.revealed)
	p.revealed = p.revealed[:0]
}
