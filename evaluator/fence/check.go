package fence

import (
	"cmp"
	"fmt"
	"slices"
)

// Warning is a problem of a fence that does not stop it loading but
// likely makes it cover something other than what was drawn.
type Warning struct {
	ID      string // the fence's id
	Problem string
}

func (w Warning) String() string { return w.ID + ": " + w.Problem }

// Warnings lists the set's suspect fences, in id order: a polygon ring
// that crosses or touches itself (a bow tie, a loop drawn twice), where
// the even-odd rule leaves part of the drawn area outside the fence.
func (s *Set) Warnings() []Warning {
	var out []Warning
	for _, f := range s.Fences() {
		start := 0
		for i, r := range f.rings {
			if a, b, ok := selfIntersection(f.coords[start:r.end]); ok {
				out = append(out, Warning{f.ID, fmt.Sprintf(
					"polygon ring %d crosses itself (edges %d and %d): part of what was drawn may count as outside", i, a, b)})
				break
			}
			start = r.end
		}
	}
	return out
}

// checkBudget bounds the edge pairs compared per ring: a ring whose
// sweep would compare more (tens of thousands of vertices folded on each
// other, as in a dense zigzag) is left unchecked rather than delaying a
// load by seconds.
const checkBudget = 1_000_000

// selfIntersection finds two non-adjacent edges of the closed flat ring r
// that cross or touch, and returns their indexes. Repeated consecutive
// positions are skipped first, as they add no edge. Edges are swept in
// order of their west end, each compared with the earlier ones whose
// east end it has not passed: few, for an ordinary ring. ok is false
// when none is found within checkBudget comparisons.
func selfIntersection(r []float64) (a, b int, ok bool) {
	pts := make([][2]float64, 0, len(r)/2)
	for i := 0; i+1 < len(r); i += 2 {
		p := [2]float64{r[i], r[i+1]}
		if len(pts) == 0 || pts[len(pts)-1] != p {
			pts = append(pts, p)
		}
	}
	n := len(pts) - 1 // edges; pts[n] == pts[0]
	if n < 3 {
		return 0, 0, false
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	west := func(i int) float64 { return min(pts[i][0], pts[i+1][0]) }
	east := func(i int) float64 { return max(pts[i][0], pts[i+1][0]) }
	slices.SortFunc(order, func(i, j int) int { return cmp.Compare(west(i), west(j)) })
	adjacent := func(i, j int) bool {
		d := i - j
		return d == 1 || d == -1 || d == n-1 || d == 1-n
	}
	var active []int
	budget := checkBudget
	for _, i := range order {
		x := west(i)
		kept := active[:0]
		for _, j := range active {
			if east(j) >= x {
				kept = append(kept, j)
			}
		}
		active = kept
		for _, j := range active {
			if budget--; budget < 0 {
				return 0, 0, false
			}
			if !adjacent(i, j) && segmentsMeet(pts[i], pts[i+1], pts[j], pts[j+1]) {
				return min(i, j), max(i, j), true
			}
		}
		active = append(active, i)
	}
	return 0, 0, false
}

// segmentsMeet reports whether segments ab and cd share a point.
func segmentsMeet(a, b, c, d [2]float64) bool {
	if max(a[0], b[0]) < min(c[0], d[0]) || max(c[0], d[0]) < min(a[0], b[0]) ||
		max(a[1], b[1]) < min(c[1], d[1]) || max(c[1], d[1]) < min(a[1], b[1]) {
		return false
	}
	o1, o2 := orient(a, b, c), orient(a, b, d)
	o3, o4 := orient(c, d, a), orient(c, d, b)
	if o1*o2 < 0 && o3*o4 < 0 {
		return true
	}
	// Touching or collinear: an endpoint on the other segment (the boxes
	// overlap, so a zero orientation means the point lies on it).
	return o1 == 0 && onSegment(a, b, c) || o2 == 0 && onSegment(a, b, d) ||
		o3 == 0 && onSegment(c, d, a) || o4 == 0 && onSegment(c, d, b)
}

// orient is the sign of the turn a→b→c: 1 left, -1 right, 0 collinear.
func orient(a, b, c [2]float64) int {
	v := (b[0]-a[0])*(c[1]-a[1]) - (b[1]-a[1])*(c[0]-a[0])
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

// onSegment reports whether p, collinear with ab, lies within ab's box.
func onSegment(a, b, p [2]float64) bool {
	return min(a[0], b[0]) <= p[0] && p[0] <= max(a[0], b[0]) &&
		min(a[1], b[1]) <= p[1] && p[1] <= max(a[1], b[1])
}
