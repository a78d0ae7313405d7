package fence

// Searcher does allocation-free point lookups. Not safe for concurrent use:
// keep one per goroutine. It works with any Set, so callers may pass a
// different snapshot on each call. The zero value is ready to use.
type Searcher struct {
	lat, lon float64
	res      []*Fence
	// visit is the method value q.add, bound once: building it per call
	// would heap-allocate, since rtree.Search's iterator escapes.
	visit func(min, max [2]float64, f *Fence) bool
}

// NewSearcher returns a Searcher with room for a few results.
func NewSearcher() *Searcher {
	q := &Searcher{res: make([]*Fence, 0, 8)}
	q.visit = q.add
	return q
}

// Contains returns the fences of s that contain (lat, lon), sorted by ID
// ascending. The slice is owned by the Searcher and valid until its next
// call. It does not allocate once the result buffer has grown to fit.
func (q *Searcher) Contains(s *Set, lat, lon float64) []*Fence {
	clear(q.res) // drop references so an old Set can be collected
	q.res = q.res[:0]
	if s == nil || lat != lat || lon != lon { // NaN would match every box in the index
		return q.res
	}
	if q.visit == nil {
		q.visit = q.add
	}
	q.lat, q.lon = lat, lon
	g := &s.index
	if sp, ok := g.cells[cellKey(g.cell(lon, lat))]; ok {
		for _, f := range g.flat[sp.start : sp.start+sp.n] {
			if lon >= f.min[0] && lon <= f.max[0] && lat >= f.min[1] && lat <= f.max[1] {
				q.add(f.min, f.max, f)
			}
		}
	}
	if g.nBig > 0 {
		p := [2]float64{lon, lat}
		g.big.Search(p, p, q.visit)
	}
	return q.res
}

// add keeps results sorted by insertion: there are usually 0-3 of them, and
// sort.Slice would allocate.
func (q *Searcher) add(_, _ [2]float64, f *Fence) bool {
	if !f.contains(q.lat, q.lon) {
		return true
	}
	q.res = append(q.res, f)
	i := len(q.res) - 1
	for ; i > 0 && q.res[i-1].rank > f.rank; i-- {
		q.res[i] = q.res[i-1]
	}
	q.res[i] = f
	return true
}
