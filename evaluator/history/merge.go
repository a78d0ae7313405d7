package history

import (
	"math"
	"slices"
	"strings"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/reorder"
	"github.com/edgefence/edgefence/evaluator/still"
)

// Merge returns the points hist with late pings placed among them,
// appended to dst: before (the pings older than hist[0], nil when they
// are not kept) first, then pings, sorted by event time, none older than
// hist[0]. A committed point comes before a late ping of its instant.
func Merge(dst []Point, before []reorder.Held, hist []Point, pings []reorder.Held) []Point {
	for i := range before {
		dst = append(dst, HeldPoint(&before[i]))
	}
	j := 0
	for i := range pings {
		for j < len(hist) && hist[j].Event <= pings[i].Event {
			dst = append(dst, hist[j])
			j++
		}
		pt := HeldPoint(&pings[i])
		if j > 0 && j < len(hist) && stoodBetween(&pt, &hist[j-1], &hist[j]) {
			pt.Gate |= GateStill
		}
		dst = append(dst, pt)
	}
	return append(dst, hist[j:]...)
}

// stoodBetween reports whether late point pt, between committed points a
// and b, was taken while the device stood still: it did at both, and pt
// lies within the standing radius of each (a device that left and came
// back between them did not).
func stoodBetween(pt, a, b *Point) bool {
	r := still.Radius(pt.Acc)
	return a.Still() && b.Still() && pt.Acc > 0 &&
		still.Distance(a.Lat, a.Lon, pt.Lat, pt.Lon) <= r && still.Distance(b.Lat, b.Lon, pt.Lat, pt.Lon) <= r
}

// prior returns what fence.Hold knows of pts[i]: whether the device stood
// still there, and the last point before it that had come when it did
// (not set aside nor skipped), if within fence.ConfirmWithin of it: a fix
// is judged on the fixes the server had, so a late one merged since does
// not judge it again. A committed fix that stood live did not stand
// when a late one (late) within still.For before it lies beyond the
// standing radius of it: the device had left and come back. (Stand
// judged the late fixes on all of them.)
func prior(pts []Point, i int, skip, late func(int) bool) fence.Prior {
	pt := &pts[i]
	pr := fence.Prior{Still: pt.Still()}
	if pr.Still && late != nil && !late(i) {
		r := still.Radius(pt.Acc)
		for k := i - 1; k >= 0 && pt.Event-pts[k].Event <= still.For; k-- {
			if q := &pts[k]; late(k) && !q.Aside() && still.Distance(q.Lat, q.Lon, pt.Lat, pt.Lon) > r {
				pr.Still = false
				break
			}
		}
	}
	for k := i - 1; k >= 0; k-- {
		q := &pts[k]
		if q.Aside() || q.Wall > pt.Wall || skip != nil && skip(k) {
			continue // (a fix that came after this one did not judge it)
		}
		if pt.Event-q.Event <= int64(fence.ConfirmWithin) {
			pr.Prev, pr.PLat, pr.PLon, pr.PAcc = true, Degrees(q.Lat), Degrees(q.Lon), float64(q.Acc)/10
		}
		break
	}
	return pr
}

// agreed returns, in dst's memory, the fences of eff (a point's settling
// with late pings from prev) with those where prev and old (the state
// without them) agree taken from rec (what was published there) instead.
// All are sorted by ID.
func agreed(dst, eff, rec, prev, old []*fence.Fence) []*fence.Fence {
	dst = dst[:0]
	in := func(fs []*fence.Fence, f *fence.Fence) bool { return fence.Find(fs, f.ID) != nil }
	take := func(f *fence.Fence) {
		if !in(dst, f) && (in(prev, f) == in(old, f) && in(rec, f) || in(prev, f) != in(old, f) && in(eff, f)) {
			dst = append(dst, f)
		}
	}
	for _, fs := range [][]*fence.Fence{eff, rec} {
		for _, f := range fs {
			take(f)
		}
	}
	slices.SortFunc(dst, func(a, b *fence.Fence) int { return strings.Compare(a.ID, b.ID) })
	return dst
}

// settle returns, in dst's memory, the fences a device in prev is in
// after pts[i], under accuracy hysteresis (fence.Settle) and what the
// fixes around it say (fence.Hold); eff is scratch memory.
func settle(dst, eff, hits, prev []*fence.Fence, margin, maxAcc float64, pts []Point, i int, skip, late func(int) bool) (out, scratch []*fence.Fence) {
	pt := &pts[i]
	lat, lon, acc := Degrees(pt.Lat), Degrees(pt.Lon), float64(pt.Acc)/10
	eff = fence.Settle(eff, hits, prev, lat, lon, acc, margin, maxAcc)
	pr := prior(pts, i, skip, late)
	return fence.Hold(dst, eff, prev, lat, lon, acc, margin, maxAcc, &pr), eff
}

// Reveal is a membership change that late pings revealed.
type Reveal struct {
	Fence *fence.Fence
	Enter bool // else an EXIT
	At    int  // index of the point that made it, in the merged points
	// Anchor is, for a change that a transition published later stands
	// for (the same change, at a committed point: it is not published
	// again), that point's index; else -1.
	Anchor int
	// Final says the change is the last the fence's membership makes and
	// the live state did not: the live state is to follow it.
	Final bool
}

// StayEnd returns the instant the stay that rs[k] began (or stands for)
// ends, as the changes rs found in merged show: the first EXIT after it
// in its fence, or never (math.MaxInt64).
func StayEnd(rs []Reveal, k int, merged []Point) int64 {
	for x := k + 1; x < len(rs); x++ {
		if rs[x].Fence == rs[k].Fence && !rs[x].Enter && rs[x].At > rs[k].At {
			return merged[rs[x].At].Event
		}
	}
	return math.MaxInt64
}

// Stayed returns the index of the first of pts, from pts[0] (a historic
// ENTER into f) on, that shows the device inside f at due (its dwell's
// instant), or -1 when one before it is outside f.
func Stayed(set *fence.Set, search *fence.Searcher, f *fence.Fence, pts []Point, due int64) int {
	for i := 1; i < len(pts); i++ {
		pt := &pts[i]
		if pt.Aside() {
			continue // says nothing of where the device was
		}
		if fence.Find(search.Contains(set, Degrees(pt.Lat), Degrees(pt.Lon)), f.ID) == nil {
			return -1 // left before the dwell was reached
		}
		if pt.Event >= due {
			return i
		}
	}
	return -1
}

// EndedBefore reports whether rs, the changes found in merged, end a stay
// in the fence id that began at enter before the instant at: an EXIT
// between them.
func EndedBefore(rs []Reveal, merged []Point, id string, enter, at int64) bool {
	for _, r := range rs {
		if e := merged[r.At].Event; r.Fence.ID == id && !r.Enter && e >= enter && e <= at {
			return true
		}
	}
	return false
}

// open is a fence whose membership, late pings included, differs from
// the one published: since the change at index at (-1: since a published
// transition that the late pings do not make).
type open struct {
	f     *fence.Fence
	enter bool
	at    int
}

// Changes finds the membership changes that late pings reveal; its zero
// value is ready, and it keeps its memory between batches.
type Changes struct {
	prev, eff []*fence.Fence
	tmp       []*fence.Fence
	old, oeff []*fence.Fence // the membership without the late pings
	other     []*fence.Fence // seed's
	open      []open
	list      []Reveal
	late      []bool // per merged point
	kept      []bool // per merged point: a late one kept before (SettledKept)
}

// Of returns the membership changes that the late pings in merged (hist
// with late pings placed among them: Merge) reveal, each fence's in
// event order. Each fix's accuracy settles fence edges (fence.Settle,
// with margin and limit maxAcc). Two memberships are followed from
// merged[start] on, where they agree: one over every point, and one over
// the committed points alone, whose changes were published. A fix clear
// of an edge decides both alike, but one within its margin keeps either's
// state: a late fix can change the state of every held fix after it, up
// to the live one. Where the first changes while they agree, they part;
// a change of the first that brings them together again is new, and so
// is the one that parted them (unless a published transition did); a
// published transition that brings them together stands for the change
// that parted them (its Anchor). Changes still parting them at the last
// point are Final. start is -1 for before the device's first point
// (inside nothing), or the index of hist[start], the committed point
// before the first late ping, whose state comes from the points before
// it as the live path settled them; whole says hist[0] is the device's
// first committed point. Each point from merged[start+1] on is marked
// as settled with the late pings (Point.Settled): a later batch starts
// from that state, as the live path now does. The result is valid until
// the next call.
func (c *Changes) Of(set *fence.Set, search *fence.Searcher, margin, maxAcc float64, hist []Point, whole bool, start int, merged []Point) []Reveal {
	c.prev = c.prev[:0]
	if start >= 0 {
		c.settledAt(set, search, margin, maxAcc, hist, whole, start)
	}
	c.old = append(c.old[:0], c.prev...)
	c.open = c.open[:0]
	c.list = c.list[:0]
	c.late = append(c.late[:0], make([]bool, start+1)...)
	c.kept = append(c.kept[:0], make([]bool, start+1)...)
	k := start + 1 // the next committed point (merged and hist agree up to start)
	for i := start + 1; i < len(merged); i++ {
		pt := &merged[i]
		committed := k < len(hist) && hist[k] == *pt
		c.late = append(c.late, !committed)
		c.kept = append(c.kept, pt.Settled == SettledKept)
		if pt.Aside() {
			// Set aside by the speed gate: no change, in either run.
			if committed {
				k++
			}
			continue
		}
		hits := search.Contains(set, Degrees(pt.Lat), Degrees(pt.Lon))
		if committed {
			// What was published there is its record (a kept late point's
			// too, whose change in a fence a later transition stands for).
			k++
			var ok bool
			if c.oeff, ok = recorded(c.oeff, hits, set, margin, maxAcc, pt); !ok {
				c.oeff, c.tmp = settle(c.oeff, c.tmp, hits, c.old, margin, maxAcc, merged, i, c.isLate, nil)
			}
		}
		c.eff, c.tmp = settle(c.eff, c.tmp, hits, c.prev, margin, maxAcc, merged, i, nil, c.isLate)
		if !slices.Equal(c.eff, c.tmp) {
			pt.Gate |= GateHeld
		}
		if committed && pt.Settled != SettledKept {
			// In a fence where both runs are in the same state, a
			// committed fix decides as it did when it came: the fix before
			// it then confirmed or refused its change.
			c.tmp = agreed(c.tmp, c.eff, c.oeff, c.prev, c.old)
			c.eff, c.tmp = c.tmp, c.eff
		}
		c.diff(c.prev, c.eff, i, false)
		c.prev, c.eff = c.eff, c.prev
		if committed {
			c.diff(c.old, c.oeff, i, true)
			c.old, c.oeff = c.oeff, c.old
		}
		pt.Record(hits, c.prev)
	}
	for _, o := range c.open {
		if o.at >= 0 {
			c.list = append(c.list, Reveal{Fence: o.f, Enter: o.enter, At: o.at, Anchor: -1, Final: true})
		}
	}
	for _, r := range c.list {
		if r.Anchor >= 0 {
			c.stale(set, search, margin, maxAcc, merged, r)
		}
	}
	return c.list
}

// stale makes the points from a change r that a published transition
// stands for, up to that transition's point, replay as published: each
// records r's fence in its state before r, so that a later batch starts
// from that state up to the published transition, and the late ones clear
// of r's fence's margin on the side r went to are not kept (Kept). A late
// one whose change in another fence is published, or was when a batch
// before kept it, is kept, its record trusted as the published state
// (SettledKept).
func (c *Changes) stale(set *fence.Set, search *fence.Searcher, margin, maxAcc float64, merged []Point, r Reveal) {
	for i := r.At; i < r.Anchor; i++ {
		pt := &merged[i]
		if pt.Aside() {
			continue
		}
		lat, lon := Degrees(pt.Lat), Degrees(pt.Lon)
		side := (fence.Find(search.Contains(set, lat, lon), r.Fence.ID) != nil) == r.Enter
		// Published, its state in r's fence is the one before r.
		pt.setHeld(r.Fence, side)
		if side {
			pt.Gate |= GateHeld
		}
		if (c.late[i] || c.kept[i]) && side && !r.Fence.Straddles(lat, lon, float64(pt.Acc)/10, margin, maxAcc) {
			if c.kept[i] || c.publishedAt(i) {
				pt.Settled = SettledKept
			} else {
				pt.Settled = settledDropped
			}
		}
	}
}

// publishedAt reports whether a change at index i is to be published.
func (c *Changes) publishedAt(i int) bool {
	for _, r := range c.list {
		if r.At == i && r.Anchor < 0 {
			return true
		}
	}
	return false
}

// settledDropped marks a point that is not to be kept (Kept).
const settledDropped Settled = 255

// Kept returns pts without the points that Changes.Of found not to be
// kept, in pts' memory.
func Kept(pts []Point) []Point {
	return slices.DeleteFunc(pts, func(pt Point) bool { return pt.Settled == settledDropped })
}

// isLate reports whether merged point j is a late one.
func (c *Changes) isLate(j int) bool { return c.late[j] }

// find returns the index of f in c.open, or -1.
// diff notes point i's changes from membership from to to, exits first:
// in the run over every point (change) or in what was published
// (published).
func (c *Changes) diff(from, to []*fence.Fence, i int, published bool) {
	note := c.change
	if published {
		note = c.published
	}
	for _, f := range from {
		if fence.Find(to, f.ID) == nil {
			note(f, false, i)
		}
	}
	for _, f := range to {
		if fence.Find(from, f.ID) == nil {
			note(f, true, i)
		}
	}
}

func (c *Changes) find(f *fence.Fence) int {
	for i := range c.open {
		if c.open[i].f == f {
			return i
		}
	}
	return -1
}

// change takes a change of the membership with late pings at index i.
func (c *Changes) change(f *fence.Fence, enter bool, i int) {
	o := c.find(f)
	if o < 0 {
		c.open = append(c.open, open{f, enter, i})
		return
	}
	if at := c.open[o].at; at >= 0 {
		c.list = append(c.list, Reveal{f, !enter, at, -1, false}, Reveal{f, enter, i, -1, false})
	}
	c.open = append(c.open[:o], c.open[o+1:]...)
}

// published takes a transition published at index i.
func (c *Changes) published(f *fence.Fence, enter bool, i int) {
	o := c.find(f)
	if o < 0 {
		c.open = append(c.open, open{f, enter, -1})
		return
	}
	if at := c.open[o].at; at >= 0 {
		c.list = append(c.list, Reveal{f, enter, at, i, false})
	}
	c.open = append(c.open[:o], c.open[o+1:]...)
}

// settledAt sets c.prev to the fences a device was in at hist[j], under
// accuracy hysteresis: a point's record of the fences its settling held
// (Point.Held) gives its state exactly (recorded), else the points before
// it are replayed from the last one recorded, or from before the
// device's first point (whole: inside nothing, as the live path began),
// or else from the oldest kept (see seed).
func (c *Changes) settledAt(set *fence.Set, search *fence.Searcher, margin, maxAcc float64, hist []Point, whole bool, j int) {
	i := j
	for ; i >= 0; i-- {
		h := &hist[i]
		if h.Aside() {
			continue
		}
		var ok bool
		if c.prev, ok = recorded(c.prev, search.Contains(set, Degrees(h.Lat), Degrees(h.Lon)), set, margin, maxAcc, h); ok {
			break
		}
	}
	switch {
	case i < 0 && whole:
		c.prev = c.prev[:0] // the first point is settled too, from nothing
	case i < 0:
		i = 0 // the oldest the speed gate did not set aside, if any
		for i < j && hist[i].Aside() {
			i++
		}
		c.seed(set, search, margin, maxAcc, &hist[i])
	}
	c.replay(set, search, margin, maxAcc, hist, i+1, j+1)
}

// recorded returns, in dst's memory, the fences a device was in at h as
// its record says, given hits, the fences containing h: those with the
// ones it held (Point.Held) turned over; and whether the record says. A
// recorded fence must have its edge within the point's margin (but a
// kept point's, SettledKept): a fence reload that renumbered them then
// replays rather than misleads.
func recorded(dst, hits []*fence.Fence, set *fence.Set, margin, maxAcc float64, h *Point) ([]*fence.Fence, bool) {
	dst = append(dst[:0], hits...)
	if h.Settled == SettledAtPosition || h.Acc == 0 && h.Settled != SettledKept {
		return dst, true
	}
	if h.Settled < SettledHeld || h.Held == [2]uint16{} {
		return dst, false
	}
	for _, r := range h.Held {
		if r == 0 {
			continue
		}
		f := set.ByRank(int(r) - 1)
		if f == nil || h.Settled != SettledKept && h.Gate&GateHeld == 0 && !f.Straddles(Degrees(h.Lat), Degrees(h.Lon), float64(h.Acc)/10, margin, maxAcc) {
			return dst, false
		}
		if k := slices.Index(dst, f); k >= 0 {
			dst = slices.Delete(dst, k, k+1)
		} else {
			k, _ := slices.BinarySearchFunc(dst, f.ID, func(g *fence.Fence, id string) int { return strings.Compare(g.ID, id) })
			dst = slices.Insert(dst, k, f)
		}
	}
	return dst, true
}

// seed sets c.prev to the fences a device was in at h, the oldest kept
// point, whose record does not say (more than two fences held, or kept
// before points recorded them): the fences containing it, unless the live
// path held its membership against its position (SettledHeld): then every
// fence whose edge is within its margin is taken as held.
func (c *Changes) seed(set *fence.Set, search *fence.Searcher, margin, maxAcc float64, h *Point) {
	lat, lon := Degrees(h.Lat), Degrees(h.Lon)
	hits := search.Contains(set, lat, lon)
	if h.Acc == 0 || h.Settled < SettledHeld {
		c.prev = append(c.prev[:0], hits...)
		return
	}
	// Settled from the other side of every fence: those within the margin
	// keep it, the others follow the position.
	c.other = c.other[:0]
	for _, f := range set.Fences() {
		if fence.Find(hits, f.ID) == nil {
			c.other = append(c.other, f)
		}
	}
	c.prev = fence.Settle(c.prev, hits, c.other, lat, lon, float64(h.Acc)/10, margin, maxAcc)
}

// replay settles the points pts[from:to] in order from c.prev.
func (c *Changes) replay(set *fence.Set, search *fence.Searcher, margin, maxAcc float64, pts []Point, from, to int) {
	for i := from; i < to; i++ {
		h := &pts[i]
		if h.Aside() {
			continue
		}
		c.eff, c.tmp = settle(c.eff, c.tmp, search.Contains(set, Degrees(h.Lat), Degrees(h.Lon)), c.prev, margin, maxAcc, pts, i, nil, nil)
		c.prev, c.eff = c.eff, c.prev
	}
}

// Place sorts late pings by event time and says where they fall among
// the committed points: pings[:first] come before the oldest (all of
// them when there is none), pings[after:] at or after the newest (none
// when there is none), and those between are merged in (Merge).
func (h *History) Place(pings []reorder.Held) (first, after int) {
	slices.SortFunc(pings, func(a, b reorder.Held) int {
		if a.Less(&b) {
			return -1
		}
		if b.Less(&a) {
			return 1
		}
		return 0
	})
	after = len(pings)
	for after > 0 && len(h.Points) > 0 && pings[after-1].Event >= h.Points[len(h.Points)-1].Event {
		after--
	}
	for first < after && (len(h.Points) == 0 || pings[first].Event < h.Points[0].Event) {
		first++
	}
	return first, after
}

// Stand judges the late points of pts (a device's history with late
// pings merged in, in event order; those marked GateLate, after the speed
// gate) by the standing rule, as they would have been judged live had
// they come in order: the fixes up to each, committed and late, are run
// through a still.Spot, and a late point where it stands is marked
// GateStill. A committed point that stood live makes the spot stand
// there if it does not yet: the history is too short to show it (16
// points). So a backlog flushed after an outage stands where the device
// stood before it, or from 30 s into the backlog if it parked during
// the outage, though no committed standing fix follows it. Fixes set
// aside, without an accuracy or of one above maxAcc metres say nothing
// of where the device stood, as live. It clears GateLate.
func Stand(pts []Point, maxAcc float64, grow uint8) {
	s := still.Grown(grow)
	for i := range pts {
		pt := &pts[i]
		late := pt.Gate&GateLate != 0
		pt.Gate &^= GateLate
		if pt.Aside() || pt.Acc == 0 || float64(pt.Acc)/10 > maxAcc {
			continue
		}
		if !late && pt.Still() && !s.Standing() {
			s.StoodAt(pt.Event, pt.Lat, pt.Lon)
			continue
		}
		if s.Observe(pt.Event, pt.Lat, pt.Lon, pt.Acc) && late {
			pt.Gate |= GateStill
		}
	}
}
