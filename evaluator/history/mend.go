package history

import (
	"math"
	"slices"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/reorder"
)

// MendBursts undoes, in each backlog burst among pings (in arrival
// order), a clock step the device took during its outage; hist is the
// device's committed points, off its clock offset (clock.Model.Off), and
// idx scratch, returned for reuse.
//
// A tracker flushes its queue in order, newest- or oldest-first, so the
// stamps of a burst move one way; a step back larger than the interval
// between two pings makes them move the other way once. One side of that
// point is moved so that the older part comes before the rest, one usual
// interval apart: the older part back, since the newest part is on the
// device's clock as it is now, unless that would put it at or before
// what the device committed before the burst while moving the newer part
// forward would not reach what it committed after, or the pings newer
// than the burst that came with it (a flush may begin with pings seconds
// old, on the model's clock): then the model is still on the clock of
// the older part (no live ping has told the step). (A step forward only
// leaves a gap, which orders nothing wrong.)
func MendBursts(pings []reorder.Held, hist []Point, off int64, idx []int) []int {
	idx = idx[:0]
	flush := func() {
		if len(idx) >= 3 {
			mendBurst(pings, idx, hist)
		}
		idx = idx[:0]
	}
	for i := range pings {
		h := &pings[i]
		if h.Clamp != clock.ClampNone || h.Wall+off-h.Event < clock.BacklogAge {
			continue // a counting clock's, or no backlog's
		}
		// A ping put back after a step is out of arrival order: not the burst's.
		if n := len(idx); n > 0 && (h.Arrived-pings[idx[n-1]].Arrived >= clock.BurstGap || h.Arrived < pings[idx[n-1]].Arrived) {
			flush()
		}
		idx = append(idx, i)
	}
	flush()
	return idx
}

// mendBurst mends the burst of pings at indices idx (see MendBursts),
// placed among the committed points hist.
func mendBurst(pings []reorder.Held, idx []int, hist []Point) {
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
		case hist[i].Wall < first-clock.BacklogAge:
			before = max(before, hist[i].Event)
		case hist[i].Wall > last || hist[i].Event > newest:
			after = min(after, hist[i].Event)
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
