package history

import (
	"slices"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/reorder"
)

// Merge returns the points hist with late pings placed among them,
// appended to dst: before (the pings older than hist[0], nil when they
// are not kept) first, then pings, sorted by event time, none older than
// hist[0]. visit is called for each run of pings between two points,
// with the point before the run and the points after it, before the run
// is placed.
func Merge(dst []Point, before []reorder.Held, hist []Point, pings []reorder.Held, visit func(a *Point, run []reorder.Held, next []Point)) []Point {
	for i := range before {
		dst = append(dst, HeldPoint(&before[i]))
	}
	j := 0
	for i := 0; i < len(pings); {
		for j+1 < len(hist) && hist[j+1].Event <= pings[i].Event {
			dst = append(dst, hist[j])
			j++
		}
		k := i
		for k < len(pings) && (j+1 >= len(hist) || pings[k].Event < hist[j+1].Event) {
			k++
		}
		visit(&hist[j], pings[i:k], hist[j+1:])
		dst = append(dst, hist[j])
		for n := i; n < k; n++ {
			dst = append(dst, HeldPoint(&pings[n]))
		}
		j++
		i = k
	}
	return append(dst, hist[min(j, len(hist)):]...)
}

// Change is one membership change that a run of late pings implies.
type Change struct {
	Fence *fence.Fence
	Enter bool // else an EXIT
	At    int  // index in the run; len(run) is the committed point after it
}

// Changes finds the membership changes of runs of late pings; its zero
// value is ready, and it keeps its memory between runs.
type Changes struct {
	prev, eff []*fence.Fence
	other     []*fence.Fence // seed's
	list      []Change
}

// Of returns the membership changes a run of late pings implies, placed
// after point a (nil: before the device's first, inside nothing) and
// followed by the points next, in order: per ping (and then next[0],
// if any), EXITs before ENTERs, each by fence ID. Each fix's accuracy
// settles fence edges (fence.Settle, with margin and limit maxAcc); a is
// hist[j] when it is a committed point, whose state then comes from the
// fixes before it as the live path settled them; whole says hist[0] is
// the device's first committed point (none was dropped before it). The
// result is valid until the next call.
func (c *Changes) Of(set *fence.Set, search *fence.Searcher, margin, maxAcc float64, hist []Point, whole bool, j int, a *Point, run []reorder.Held, next []Point) []Change {
	c.prev = c.prev[:0]
	if a != nil { // else before the device's first ping: inside nothing
		c.settledAt(set, search, margin, maxAcc, hist, whole, j, a)
	}
	c.list = c.list[:0]
	for i := range run {
		r := &run[i]
		c.eff = fence.Settle(c.eff, search.Contains(set, r.Lat, r.Lon), c.prev, r.Lat, r.Lon, r.Accuracy(), margin, maxAcc)
		c.diff(c.eff, i)
	}
	if len(next) > 0 {
		n := &next[0]
		lat, lon := Degrees(n.Lat), Degrees(n.Lon)
		c.eff = fence.Settle(c.eff, search.Contains(set, lat, lon), c.prev, lat, lon, float64(n.Acc)/10, margin, maxAcc)
		c.diff(c.eff, len(run))
	}
	return c.list
}

// settledAt sets c.prev to the fences a device was in at a, hist[j],
// under accuracy hysteresis: a fix near an edge kept the state the fixes
// before it had set, so they are replayed from the last point whose
// membership was its position's (one without accuracy, or one the live
// path settled so), or from before the device's first point (whole:
// inside nothing, as the live path began), or else from the oldest kept
// (see seed). A point that is not hist[j] counts at its position alone.
func (c *Changes) settledAt(set *fence.Set, search *fence.Searcher, margin, maxAcc float64, hist []Point, whole bool, j int, a *Point) {
	if j < 0 || j >= len(hist) || &hist[j] != a {
		c.prev = append(c.prev[:0], search.Contains(set, Degrees(a.Lat), Degrees(a.Lon))...)
		return
	}
	i := j
	for i > 0 && hist[i].Acc != 0 && hist[i].Settled != SettledAtPosition {
		i--
	}
	if i == 0 && whole && hist[0].Acc != 0 && hist[0].Settled != SettledAtPosition {
		c.prev = c.prev[:0]
		i = -1 // the first point is settled too, from nothing
	} else {
		c.seed(set, search, margin, maxAcc, &hist[i])
	}
	c.replay(set, search, margin, maxAcc, hist[i+1:j+1])
}

// seed sets c.prev to the fences a device was in at h, where a replay
// starts: the fences containing it, unless the live path held its
// membership against its position (SettledHeld) and the points before it
// are not kept: then every fence whose edge is within its margin is taken
// as held, the one case a single such fence makes (a fix near two edges
// at once is rarer than the margin). A point settled the other way, or
// one whose settling is not known, counts at its position alone.
func (c *Changes) seed(set *fence.Set, search *fence.Searcher, margin, maxAcc float64, h *Point) {
	lat, lon := Degrees(h.Lat), Degrees(h.Lon)
	hits := search.Contains(set, lat, lon)
	if h.Acc == 0 || h.Settled != SettledHeld {
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

// replay settles the points pts in order from c.prev.
func (c *Changes) replay(set *fence.Set, search *fence.Searcher, margin, maxAcc float64, pts []Point) {
	for i := range pts {
		h := &pts[i]
		lat, lon := Degrees(h.Lat), Degrees(h.Lon)
		c.eff = fence.Settle(c.eff, search.Contains(set, lat, lon), c.prev, lat, lon, float64(h.Acc)/10, margin, maxAcc)
		c.prev, c.eff = c.eff, c.prev
	}
}

// diff appends the changes from c.prev to hits at run index i, EXITs
// first, and makes hits the new c.prev. Both are sorted by fence ID.
func (c *Changes) diff(hits []*fence.Fence, i int) {
	for _, f := range c.prev {
		if fence.Find(hits, f.ID) == nil {
			c.list = append(c.list, Change{f, false, i})
		}
	}
	for _, f := range hits {
		if fence.Find(c.prev, f.ID) == nil {
			c.list = append(c.list, Change{f, true, i})
		}
	}
	c.prev = append(c.prev[:0], hits...)
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
