package fence

import "time"

// ConfirmWithin is how recent the fix before a fix must be to confirm or
// refuse its change (Hold): a device reporting less often is judged on
// each fix alone, as a second fix would come too late to wait for.
const ConfirmWithin = 10 * time.Second

// Settle returns the fences a device is in after a fix at lat, lon with
// an accuracy of acc metres, given before, the fences it was in: hits
// (the fences containing the fix), except that a fence whose edge lies
// within margin × acc (the fence's own Margin, if it has one) of the fix
// keeps the device's membership as it was. So a device must be inside by more than margin times the fix's
// error to enter, outside by more than that to leave. A fix less
// accurate than limit (or than the fence's own MaxAccuracy) counts at
// its position alone, as does one without accuracy (acc 0). hits and
// before are sorted by ID, and so is the result, built in dst's memory.
func Settle(dst, hits, before []*Fence, lat, lon, acc, margin, limit float64) []*Fence {
	dst = dst[:0]
	if !(acc > 0) {
		return append(dst, hits...)
	}
	for _, f := range hits {
		if Find(before, f.ID) != nil || !f.straddles(lat, lon, acc, margin, limit) {
			dst = append(dst, f)
		}
	}
	for _, f := range before {
		if Find(hits, f.ID) == nil && f.straddles(lat, lon, acc, margin, limit) {
			dst = append(dst, f) // still inside
			for k := len(dst) - 1; k > 0 && dst[k-1].ID > f.ID; k-- {
				dst[k], dst[k-1] = dst[k-1], dst[k]
			}
		}
	}
	return dst
}

// Prior is what Hold knows of a fix beyond its position: whether the
// device stood still there (package still), and the fix before it.
type Prior struct {
	Still      bool
	Prev       bool    // there is a fix before it, at PLat, PLon, recent enough to confirm
	PLat, PLon float64 // …in degrees
	PAcc       float64 // …of an accuracy of PAcc metres (0: none)
}

// Hold returns eff, the fences a fix at lat, lon with an accuracy of acc
// metres settled into (Settle, with margin) from before, with the
// changes the fix may not make undone, in dst's memory: every change
// while the device stands still, and a change the fix before it does not
// agree with (it lies on the old side of that fence's edge, or within
// its margin), unless the fence asks for no confirmation (Single). As
// Settle, a fix without accuracy, or less accurate than limit (or the
// fence's own cap), counts at its position alone. eff and before are
// sorted by ID, and so is the result.
func Hold(dst, eff, before []*Fence, lat, lon, acc, margin, limit float64, pr *Prior) []*Fence {
	dst = dst[:0]
	if !(acc > 0) || !pr.Still && !pr.Prev {
		return append(dst, eff...)
	}
	held := func(f *Fence, in bool) bool {
		lim := limit
		if f.HasMaxAccuracy {
			lim = f.MaxAccuracy
		}
		return acc <= lim && (pr.Still || pr.Prev && !f.Single &&
			(f.Contains(pr.PLat, pr.PLon) != in || f.Straddles(pr.PLat, pr.PLon, pr.PAcc, margin, limit)))
	}
	for _, f := range eff {
		if Find(before, f.ID) != nil || !held(f, true) {
			dst = append(dst, f)
		}
	}
	for _, f := range before {
		if Find(eff, f.ID) == nil && held(f, false) {
			dst = append(dst, f) // still inside
			for k := len(dst) - 1; k > 0 && dst[k-1].ID > f.ID; k-- {
				dst[k], dst[k-1] = dst[k-1], dst[k]
			}
		}
	}
	return dst
}

// Straddles reports whether a fix at lat, lon with an accuracy of acc
// metres lies within margin × acc of f's edge, as Settle judges it (a fix
// without accuracy, or less accurate than limit or f's own cap, does not).
func (f *Fence) Straddles(lat, lon, acc, margin, limit float64) bool {
	return acc > 0 && f.straddles(lat, lon, acc, margin, limit)
}

// straddles reports whether a fix at lat, lon with an accuracy of acc
// metres (within the fence's limit) lies within margin × acc of f's edge.
func (f *Fence) straddles(lat, lon, acc, margin, limit float64) bool {
	if f.HasMaxAccuracy {
		limit = f.MaxAccuracy
	}
	if f.HasMargin {
		margin = f.Margin
	}
	// Capped at three quarters of the fence's depth: a fence smaller than
	// the fix's error could otherwise never be entered (or left by a fix
	// just beyond it), whatever the fixes said; a fix near its middle
	// still counts.
	return acc <= limit && f.EdgeDistance(lat, lon) <= min(margin*acc, f.depth*0.75)
}

// estimateDepth returns how far from its edge a point inside f can be,
// in metres: the radius of a circle; for polygons the deepest of a grid
// of points over the box (8 × 8, then 32 × 32 for a fence too thin for
// the first to hit), which errs low by at most half a cell. A fence no
// grid point falls in gets a depth of 0: its edge is never widened.
func (f *Fence) estimateDepth() float64 {
	if f.isCircle {
		return f.circle.radius
	}
	best := 0.0
	for _, n := range []int{8, 32} {
		for i := range n {
			lat := f.min[1] + (f.max[1]-f.min[1])*(float64(i)+0.5)/float64(n)
			for j := range n {
				lon := f.min[0] + (f.max[0]-f.min[0])*(float64(j)+0.5)/float64(n)
				if f.contains(lat, lon) {
					best = max(best, f.EdgeDistance(lat, lon))
				}
			}
		}
		if best > 0 {
			break
		}
	}
	return best
}

// Find returns the fence with id among fs, or nil.
func Find(fs []*Fence, id string) *Fence {
	for _, f := range fs {
		if f.ID == id {
			return f
		}
	}
	return nil
}
