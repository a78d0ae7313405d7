package evaluator

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/reorder"
)

// point is a committed ping, kept so that a late ping can be placed
// among the pings around it: its fence membership is evaluated again
// from the position when a late ping needs it. The position is in
// fixed point (see fixed); the processor rounds every ping's position to
// it on ingest, so a point evaluated again gives the live answer.
type point struct {
	event    int64  // timeline
	wall     int64  // ingest wall clock, Unix ns
	lat, lon int32  // degrees × fixedScale
	acc      uint16 // the fix's accuracy, decimetres (reorder.Held.Acc)
}

// fixedScale is how many steps a degree of a kept position has: 1e-7°
// is 1.1 cm or less, far below a GPS fix's error, and ±180° fits an int32.
const fixedScale = 1e7

// fixed returns degrees in the fixed point of a history point.
func fixed(deg float64) int32 { return int32(math.Round(deg * fixedScale)) }

// degrees returns a fixed-point position in degrees: the nearest float64
// to it, so a position rounded with quantize comes back identical.
func degrees(f int32) float64 { return float64(f) / fixedScale }

// quantize rounds a position in degrees to what a history point keeps.
func quantize(deg float64) float64 { return degrees(fixed(deg)) }

// pointOf keeps what the history needs of a ping at event, taken at wall,
// of accuracy acc (decimetres, reorder.AccOf).
func pointOf(event, wall int64, lat, lon float64, acc uint16) point {
	return point{event: event, wall: wall, lat: fixed(lat), lon: fixed(lon), acc: acc}
}

// lateBatch holds a device's late pings until they stop coming: a
// store-and-forward backlog is reconciled whole, and pings that turn out
// to be a backward step are put back on the live path.
type lateBatch struct {
	pings       []reorder.Held
	first, last int64 // arrivals of the oldest and newest, processor ns
}

// due reports whether b is to be reconciled at now: no late ping came
// for wait, or its first has waited maxWait (a device that keeps sending
// the odd late ping).
func (b *lateBatch) due(now int64, wait int64) bool {
	return now-b.last >= wait || now-b.first >= 4*wait
}

// lateDue reports whether d's batch is to be reconciled at now: it is
// due, and no backward step is being told from delayed pings (two or more
// agree: its pings may yet move), unless that has taken twice as long as
// a batch may wait. One behind ping alone is most often a delayed one.
func (p *Processor) lateDue(d *device, now int64) bool {
	wait := int64(p.cfg.HistoryWait)
	if d.clk.Pending() <= -2 && now-d.late.first < 8*wait {
		return false
	}
	return d.late.due(now, wait)
}

// change is one membership change that a reconciled run implies.
type change struct {
	fence *fence.Fence
	typ   Type
	at    int // index in the run; len(run) is the committed ping after it
}

// commit records a released ping in the device's history, dropping what
// falls out of it: pings older than the history window, and the oldest
// beyond HistoryPoints while no late batch waits to be placed among them.
func (p *Processor) commit(d *device, pg *Ping) {
	d.done = max(d.done, pg.Event)
	if p.cfg.History <= 0 || d.holdUs == 0 {
		return
	}
	if n := len(d.hist); n > 0 && d.hist[n-1].event == pg.Event && d.hist[n-1].lat == fixed(pg.Lat) && d.hist[n-1].lon == fixed(pg.Lon) {
		return // a redelivered copy: it would only crowd the history
	}
	if d.hist == nil {
		d.hist = make([]point, 0, 1) // most devices keep one or a few
	}
	if n := len(d.hist); n >= p.cfg.HistoryPoints && n == cap(d.hist) && d.late == nil {
		// trim would drop the oldest after the append: drop it first, so
		// that a full history never doubles its array for one point.
		d.trimmed = true
		d.hist = d.hist[:copy(d.hist, d.hist[1:])]
	}
	d.hist = append(d.hist, pointOf(pg.Event, pg.Ingest.UnixNano(), pg.Lat, pg.Lon, reorder.AccOf(pg.Acc)))
	p.trim(d)
}

// seen reports whether a ping at event and position lat, lon is in d's
// history, buffer or late batch: a redelivered copy (a step back reuses
// stamps, not positions too).
func (d *device) seen(event int64, lat, lon float64) bool {
	for i := range d.hist {
		if h := &d.hist[i]; h.event == event && h.lat == fixed(lat) && h.lon == fixed(lon) {
			return true
		}
	}
	for i := range d.buf {
		if h := &d.buf[i]; h.Event == event && h.Lat == lat && h.Lon == lon {
			return true
		}
	}
	if d.late != nil {
		for i := range d.late.pings {
			if h := &d.late.pings[i]; h.Event == event && h.Lat == lat && h.Lon == lon {
				return true
			}
		}
	}
	return false
}

func (p *Processor) trim(d *device) {
	if d.late != nil || len(d.hist) == 0 {
		return
	}
	cut := 0
	horizon := d.hist[len(d.hist)-1].event - int64(p.cfg.History)
	for cut < len(d.hist)-1 && (len(d.hist)-cut > p.cfg.HistoryPoints || d.hist[cut].event < horizon) {
		cut++
	}
	if cut > 0 {
		d.trimmed = true
		n := copy(d.hist, d.hist[cut:])
		d.hist = d.hist[:n]
	}
}

// deferLate holds a late ping in its device's batch; the batch is reconciled
// once no late ping has come for HistoryWait.
func (p *Processor) deferLate(d *device, h *reorder.Held, now int64) {
	if d.late == nil {
		if n := len(p.batches); n > 0 {
			d.late = p.batches[n-1]
			p.batches = p.batches[:n-1]
		} else {
			d.late = &lateBatch{}
		}
	}
	if len(d.late.pings) == 0 {
		d.late.first = now
	}
	d.late.pings = append(d.late.pings, *h)
	d.late.last = now
	p.deferred++
	p.timers.Push(now+int64(p.cfg.HistoryWait), d)
}

// undefer puts the pings of d's batch that belong to the generation a
// step by shift just began back on the live path, re-keyed: the one in
// which a ping's transit delay is the smaller that is not negative (see
// clock.Model.Newer), whenever it came. The others were delayed pings of the
// generation before.
func (p *Processor) undefer(d *device, shift int64, now int64) {
	b := d.late
	if b == nil {
		return
	}
	// Re-key by delay first; but a ping that arrived before a fresh ping
	// of the old generation could have been fixed is the old one's, and
	// so is one late on both clocks that lands among the new generation's
	// pings on the new one but fills a hole on the old one: the network
	// held it back longer than the step (both delays are plausible then;
	// the pings around it are not). A backlog's pings are its burst's:
	// one far behind on either clock stays in the batch as it was, and
	// the burst's stamps say where its clock stepped (mendBursts).
	// Those with the smaller delays on the new clock are placed first:
	// of two that would crowd each other there, the more delayed one is
	// the old generation's.
	p.burst = p.burst[:0]
	for i := range b.pings {
		if h := &b.pings[i]; d.clk.Newer(h.Event, h.Wall, shift) {
			p.burst = append(p.burst, i)
		}
	}
	slices.SortFunc(p.burst, func(i, j int) int {
		return cmp.Compare(b.pings[i].Wall-b.pings[i].Event, b.pings[j].Wall-b.pings[j].Event)
	})
	var fresh int64 = math.MinInt64 // the latest arrival of the old generation's fresh pings
	for i := range d.hist {
		fresh = max(fresh, d.hist[i].wall)
	}
	for i := range d.buf {
		fresh = max(fresh, d.buf[i].Wall)
	}
	behindTol := max(clock.MinBehind, d.hold())
	for n, i := range p.burst {
		h := &b.pings[i]
		age := h.Wall + d.clk.Off() - h.Event
		if age >= clock.BacklogAge && age+shift >= clock.BacklogAge {
			p.burst[n] = -1 // a backlog's on either clock: its burst places it (mendBursts)
		} else if h.Event <= d.high && age < clock.BacklogAge &&
			(d.clk.Overtaken(h.Wall, fresh, behindTol) || d.clk.Late(h.Event-shift, h.Wall) && d.fillsHole(h.Event, h.Event-shift, i)) {
			p.burst[n] = -1
		} else {
			h.Event -= shift
		}
	}
	slices.Sort(p.burst)
	k, n := 0, 0
	p.redo = p.redo[:0]
	for i, h := range b.pings {
		for n < len(p.burst) && p.burst[n] < i {
			n++
		}
		if n < len(p.burst) && p.burst[n] == i {
			p.redo = append(p.redo, h)
			continue
		}
		b.pings[k] = h
		k++
	}
	b.pings = b.pings[:k]
	p.deferred -= len(p.redo)
	if k == 0 {
		p.freeBatch(d)
	}
	// A DWELL the moved pings held back is decided first: they come later.
	p.dwellsAfterReconcile(d, now)
	for i := range p.redo {
		h := &p.redo[i]
		p.placeLive(d, h, false, now)
	}
}

// gap returns how far event lies from the nearest of d's pings that
// are committed, buffered or waiting in its late batch (but the batch's
// ping at index skip), and whether it lies between two of them: a
// tracker's fixes do not crowd each other, and a ping delayed past the
// others leaves a hole among them.
func (d *device) gap(event int64, skip int) (g int64, between bool) {
	lo, hi := int64(math.MaxInt64), int64(math.MaxInt64) // nearest before, after
	near := func(e int64) {
		if e > event {
			hi = min(hi, e-event)
		} else {
			lo = min(lo, event-e)
		}
	}
	for i := range d.hist {
		near(d.hist[i].event)
	}
	for i := range d.buf {
		near(d.buf[i].Event)
	}
	if d.late != nil {
		for i := range d.late.pings {
			if i != skip {
				near(d.late.pings[i].Event)
			}
		}
	}
	return min(lo, hi), lo != math.MaxInt64 && hi != math.MaxInt64
}

// fillsHole reports whether a ping of d at event old on the generation
// before a step, or at event cur on the current one, fills a hole the old
// generation left rather than crowding the current one's pings (the
// batch's ping at index skip is the one placed).
func (d *device) fillsHole(old, cur int64, skip int) bool {
	gOld, between := d.gap(old, skip)
	gCur, _ := d.gap(cur, skip)
	return between && gOld > gCur
}

// freeBatch gives d's empty batch back to the pool.
func (p *Processor) freeBatch(d *device) {
	b := d.late
	d.late = nil
	clear(b.pings)
	b.pings = b.pings[:0]
	if cap(b.pings) <= 4*p.cfg.BufferCap {
		p.batches = append(p.batches, b)
	}
	p.trim(d)
}

// reconcileLate places d's batch into its history. Pings after everything
// committed go back to the live path; pings before the history go to the
// late output; the rest are merged in event order, and the transitions
// the merged history implies that were not published are published as
// historic ones.
func (p *Processor) reconcileLate(d *device, now int64) {
	if p.tellPendingStep(d, now) && d.late == nil {
		return // every late ping was the step's
	}
	b := d.late
	pings := b.pings
	p.mendBursts(d, pings)
	slices.SortFunc(pings, func(a, b reorder.Held) int {
		if a.Less(&b) {
			return -1
		}
		if b.Less(&a) {
			return 1
		}
		return 0
	})
	p.deferred -= len(pings)
	// Pings after the newest committed ping are the newest news: live
	// (only a timer's instant, such as a DWELL's, may lie after them).
	n := len(pings)
	for n > 0 && len(d.hist) > 0 && pings[n-1].Event >= d.hist[len(d.hist)-1].event {
		n--
	}
	p.redo = append(p.redo[:0], pings[n:]...)
	pings = pings[:n]
	first := 0
	for first < len(pings) && (len(d.hist) == 0 || pings[first].Event < d.hist[0].event) {
		first++
	}
	if first > 0 && len(d.hist) > 0 && !d.trimmed {
		// Before the device's first committed ping: nothing was before it.
		p.mergeRun(d, nil, pings[:first], d.hist, now)
		p.m.Reconciled.Add(first)
	} else {
		for i := range pings[:first] {
			p.lost(d, &pings[i])
		}
	}
	before := pings[:first]
	pings = pings[first:]
	// Merge run by run: the pings between history points j and j+1.
	j := 0
	merged := d.hist
	p.merged = p.merged[:0]
	if !d.trimmed {
		for _, h := range before {
			p.merged = append(p.merged, pointOf(h.Event, h.Wall, h.Lat, h.Lon, h.Acc))
		}
	}
	for i := 0; i < len(pings); {
		for j+1 < len(merged) && merged[j+1].event <= pings[i].Event {
			p.merged = append(p.merged, merged[j])
			j++
		}
		k := i
		for k < len(pings) && (j+1 >= len(merged) || pings[k].Event < merged[j+1].event) {
			k++
		}
		p.mergeRun(d, &merged[j], pings[i:k], merged[j+1:], now)
		p.merged = append(p.merged, merged[j])
		for _, h := range pings[i:k] {
			p.merged = append(p.merged, pointOf(h.Event, h.Wall, h.Lat, h.Lon, h.Acc))
		}
		j++
		i = k
	}
	p.merged = append(p.merged, merged[min(j, len(merged)):]...)
	d.hist = append(d.hist[:0], p.merged...)
	p.m.Reconciled.Add(len(pings))
	p.freeBatch(d)
	p.dwellsAfterReconcile(d, now)
	for i := range p.redo {
		if h := &p.redo[i]; h.Event > d.done {
			p.placeLive(d, h, false, now)
		} else {
			heldPing(h, &p.ping, d.id)
			p.evaluate(d, &p.ping, now)
		}
	}
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
	end := d.high // the old generation's freshest
	if end == noTime {
		end = 0
	}
	d.clk.MarkStep(shift0, end)
	p.m.Steps.Inc()
	p.undefer(d, d.clk.Shift()-shift0, now)
	return true
}

// mendBursts undoes, in each backlog burst among pings (in arrival
// order), a clock step the device took during its outage. A tracker
// flushes its queue in order, newest- or oldest-first, so the stamps of a
// burst move one way; a step back larger than the interval between two
// pings makes them move the other way once. One side of that point is
// moved so that the older part comes before the rest, one usual interval
// apart: the older part back, since the newest part is on the device's
// clock as it is now, unless that would put it at or before what the
// device committed before the burst while moving the newer part forward
// would not reach what it committed after, or the pings newer than the
// burst that came with it (a flush may begin with pings seconds old, on
// the model's clock): then the model is still on the clock of the older
// part (no live ping has told the step). (A step forward only leaves a
// gap, which orders nothing wrong.)
func (p *Processor) mendBursts(d *device, pings []reorder.Held) {
	p.burst = p.burst[:0]
	flush := func() {
		if len(p.burst) >= 3 {
			mendBurst(pings, p.burst, d.hist)
		}
		p.burst = p.burst[:0]
	}
	for i := range pings {
		h := &pings[i]
		if h.Clamp != clock.ClampNone || h.Wall+d.clk.Off()-h.Event < clock.BacklogAge {
			continue // a counting clock's, or no backlog's
		}
		// A ping put back after a step is out of arrival order: not the burst's.
		if n := len(p.burst); n > 0 && (h.Arrived-pings[p.burst[n-1]].Arrived >= clock.BurstGap || h.Arrived < pings[p.burst[n-1]].Arrived) {
			flush()
		}
		p.burst = append(p.burst, i)
	}
	flush()
}

// mendBurst mends the burst of pings at indices idx (see mendBursts),
// placed among the committed points hist.
func mendBurst(pings []reorder.Held, idx []int, hist []point) {
	down, up := 0, 0
	for k := 1; k < len(idx); k++ {
		if pings[idx[k]].Event < pings[idx[k-1]].Event {
			down++
		} else {
			up++
		}
	}
	newestFirst := down > up
	var usual int64 // the median interval in the burst's direction
	{
		var steps [32]int64
		n := 0
		for k := 1; k < len(idx) && n < len(steps); k++ {
			if st := pings[idx[k]].Event - pings[idx[k-1]].Event; (st < 0) == newestFirst {
				steps[n] = st
				n++
			}
		}
		if n == 0 {
			return
		}
		slices.Sort(steps[:n])
		usual = steps[n/2]
	}
	// move reports the step back at burst position k, if any: the older
	// part moved by delta (< 0) comes before the newer part.
	move := func(k int) (delta int64, ok bool) {
		st := pings[idx[k]].Event - pings[idx[k-1]].Event
		if newestFirst && st <= 0 || !newestFirst && st >= 0 {
			return 0, false
		}
		if newestFirst {
			return usual - st, true // usual < 0 < st
		}
		return st - usual, true // st < 0 < usual
	}
	// older reports whether burst position j is older than the point at k.
	older := func(j, k int) bool { return newestFirst == (j >= k) }
	// The burst's bounds after moving the older parts back (lo) or the
	// newer parts forward (hi), and the committed points around it.
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	any := false
	for j := range idx {
		var back, fwd int64
		for k := 1; k < len(idx); k++ {
			if delta, ok := move(k); ok {
				any = true
				if older(j, k) {
					back += delta
				} else {
					fwd -= delta
				}
			}
		}
		e := pings[idx[j]].Event
		lo, hi = min(lo, e+back), max(hi, e+fwd)
	}
	if !any {
		return
	}
	// Before: committed before the outage, well before the burst (live
	// pings may come in between its pings, or just before it).
	// After: committed after the burst came, or while it came and newer
	// than all of it (the fresh pings its newest part goes on from), and
	// the batch's newer pings that came with it.
	first, last := pings[idx[0]].Wall, pings[idx[len(idx)-1]].Wall
	newest := int64(math.MinInt64)
	for _, i := range idx {
		newest = max(newest, pings[i].Event)
	}
	before, after := int64(math.MinInt64), int64(math.MaxInt64)
	for i := range hist {
		switch {
		case hist[i].wall < first-clock.BacklogAge:
			before = max(before, hist[i].event)
		case hist[i].wall > last || hist[i].event > newest:
			after = min(after, hist[i].event)
		}
	}
	for i := range pings {
		if pings[i].Event > newest && pings[i].Wall >= first-clock.BacklogAge {
			after = min(after, pings[i].Event)
		}
	}
	forward := lo <= before && hi < after
	for k := 1; k < len(idx); k++ {
		delta, ok := move(k)
		if !ok {
			continue
		}
		for j := range idx {
			switch o := older(j, k); {
			case o && !forward:
				pings[idx[j]].Event += delta
			case !o && forward:
				pings[idx[j]].Event -= delta
			}
		}
	}
}

// lost sends a late ping that no history can place to the late output.
func (p *Processor) lost(d *device, h *reorder.Held) {
	var pg Ping
	heldPing(h, &pg, d.id)
	pg.Stamp, pg.HasStamp = h.Stamp, h.Clamp != clock.ClampMissing
	p.late = Late{Ping: pg, Reason: LateBeforeHistory, Watermark: d.wm}
	p.m.Late.Inc()
	p.sink.Late(&p.late)
}

// mergeRun publishes what a run of late pings between committed points a
// (nil: before the device's first) and next[0] (if any) implies. Per fence, the run's membership changes
// are compared with what was published at next[0]: where a and next[0]
// agree, every change is new (an ENTER and EXIT inside a gap); where they
// differ, the published transition stands for the last change and the
// others are new.
func (p *Processor) mergeRun(d *device, a *point, run []reorder.Held, next []point, now int64) {
	set := p.fences()
	p.prev = p.prev[:0]
	if a != nil { // else before the device's first ping: inside nothing
		p.settledAt(d, a, len(d.hist)-len(next)-1, set)
	}
	p.changes = p.changes[:0]
	for i := range run {
		r := &run[i]
		p.eff = fence.Settle(p.eff, p.search.Contains(set, r.Lat, r.Lon), p.prev, r.Lat, r.Lon, r.Accuracy(), p.cfg.AccuracyMargin, p.cfg.MaxAccuracy)
		p.diff(p.eff, i)
	}
	if len(next) > 0 {
		n := &next[0]
		lat, lon := degrees(n.lat), degrees(n.lon)
		p.eff = fence.Settle(p.eff, p.search.Contains(set, lat, lon), p.prev, lat, lon, float64(n.acc)/10, p.cfg.AccuracyMargin, p.cfg.MaxAccuracy)
		p.diff(p.eff, len(run))
	}
	for ci, c := range p.changes {
		last, odd := true, true
		for _, o := range p.changes[ci+1:] {
			if o.fence == c.fence {
				last = false
				break
			}
		}
		if last {
			for _, o := range p.changes[:ci] {
				if o.fence == c.fence {
					odd = !odd
				}
			}
		}
		published := len(next) > 0 && last && odd // at next[0]: it stands for this one
		dwelled := false
		if !published {
			at := p.runPoint(run, next, c.at)
			p.historic(d, c.fence.ID, c.typ, &at, at.event, now)
			if c.typ == Enter {
				dwelled = p.historicDwell(d, c, run, next, now)
			}
		}
		if last && c.typ == Enter && len(next) > 0 {
			p.staysFrom(d, c.fence, p.runPoint(run, next, c.at).event, !published, dwelled, &next[0], now)
		}
	}
	p.publishRevealed()
}

// staysFrom tells d's state in fence f, inside since before committed
// point b, that the stay under way began at event (late pings revealed
// the ENTER, or, when fresh, an EXIT and ENTER after the one it had): its
// DWELL counts from there, and a fresh stay's has come (dwelled) or not.
// One that this brings before what d committed is published now, as
// historic: the pings since confirm it, and the live one would come out
// of order.
func (p *Processor) staysFrom(d *device, f *fence.Fence, event int64, fresh, dwelled bool, b *point, now int64) {
	i := d.state(f.ID)
	if i < 0 || !d.states[i].inside || d.states[i].enter > b.event {
		return
	}
	st := &d.states[i]
	st.enter = event
	if fresh {
		st.dwelled = dwelled
	}
	if dw, ok := p.dwellOf(f); ok && !st.dwelled && event+dw <= d.done {
		st.dwelled = true
		p.historic(d, f.ID, Dwell, b, event+dw, now)
	}
}

// dwellsAfterReconcile publishes, as historic, the DWELLs that came due
// before what d committed while late pings were waiting (see evaluate):
// the device stayed inside through them.
func (p *Processor) dwellsAfterReconcile(d *device, now int64) {
	set := p.fences()
	p.dues = p.dues[:0]
	for i := range d.states {
		st := &d.states[i]
		if !st.inside || st.dwelled {
			continue
		}
		if f := set.ByID(st.fence); f != nil {
			if dw, ok := p.dwellOf(f); ok && st.enter+dw <= d.done {
				p.dues = append(p.dues, due{i, st.enter + dw})
			}
		}
	}
	p.overdueDwells(d, d.done, now)
}

// lateBefore reports whether a late ping stamped before event waits to
// be reconciled.
func (d *device) lateBefore(event int64) bool {
	if d.late == nil {
		return false
	}
	for i := range d.late.pings {
		if d.late.pings[i].Event < event {
			return true
		}
	}
	return false
}

// overdueDwells publishes, as historic, the DWELLs in p.dues that came due
// at or before done, what d had committed: they waited for late pings, and
// published live they would come out of order. It leaves the others in
// p.dues.
func (p *Processor) overdueDwells(d *device, done, now int64) {
	k := 0
	for _, u := range p.dues {
		if u.at > done {
			p.dues[k] = u
			k++
			continue
		}
		st := &d.states[u.i]
		st.dwelled = true
		// Confirmed by the newest committed ping: its position and ingest.
		pt := pointOf(u.at, p.base.Add(time.Duration(now)).UnixNano(), degrees(d.lat), degrees(d.lon), 0)
		if n := len(d.hist); n > 0 {
			pt = d.hist[n-1]
		}
		p.historic(d, st.fence, Dwell, &pt, u.at, now)
	}
	p.dues = p.dues[:k]
	p.publishRevealed()
}

// runPoint returns the point at index i of a run followed by next.
func (p *Processor) runPoint(run []reorder.Held, next []point, i int) point {
	if i < len(run) {
		h := &run[i]
		return pointOf(h.Event, h.Wall, h.Lat, h.Lon, h.Acc)
	}
	return next[i-len(run)]
}

// historicDwell publishes the DWELL of a historic ENTER c, when the run
// (and the committed pings after it) show the device inside its fence
// for the fence's dwell, and reports whether it did.
func (p *Processor) historicDwell(d *device, c change, run []reorder.Held, next []point, now int64) bool {
	dw, ok := p.dwellOf(c.fence)
	if !ok {
		return false
	}
	enter := p.runPoint(run, next, c.at).event
	for i := c.at + 1; i < len(run)+len(next); i++ {
		pt := p.runPoint(run, next, i)
		if find(p.search.Contains(p.fences(), degrees(pt.lat), degrees(pt.lon)), c.fence.ID) == nil {
			return false // left before the dwell was reached
		}
		if pt.event >= enter+dw {
			p.historic(d, c.fence.ID, Dwell, &pt, enter+dw, now)
			return true
		}
	}
	return false
}

// historic publishes a transition that late pings revealed, caused by the
// ping at pt, at event (pt's, or a DWELL's instant).
func (p *Processor) historic(d *device, fenceID string, typ Type, pt *point, event, now int64) {
	p.out = Transition{
		Device: d.id, Fence: fenceID, Type: typ, Event: event,
		Lat: degrees(pt.lat), Lon: degrees(pt.lon), Ingest: time.Unix(0, pt.wall),
		Decided: p.base.Add(time.Duration(now)), Historic: true,
		Stamp: event + d.clk.Shift(), Offset: d.clk.Off() + d.clk.Shift(),
	}
	p.m.Historic[typ].Inc()
	p.revealed = append(p.revealed, p.out)
}

// publishRevealed sends the historic transitions of one run in event
// order (a DWELL may come due after another fence's change).
func (p *Processor) publishRevealed() {
	slices.SortStableFunc(p.revealed, func(a, b Transition) int { return cmp.Compare(a.Event, b.Event) })
	for i := range p.revealed {
		p.sink.Transition(&p.revealed[i])
	}
	clear(p.revealed)
	p.revealed = p.revealed[:0]
}

// diff appends the changes from p.prev to hits at run index i, EXITs
// first, and makes hits the new p.prev. Both are sorted by fence ID.
func (p *Processor) diff(hits []*fence.Fence, i int) {
	for _, f := range p.prev {
		if find(hits, f.ID) == nil {
			p.changes = append(p.changes, change{f, Exit, i})
		}
	}
	for _, f := range hits {
		if find(p.prev, f.ID) == nil {
			p.changes = append(p.changes, change{f, Enter, i})
		}
	}
	p.prev = append(p.prev[:0], hits...)
}
