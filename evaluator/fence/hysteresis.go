package fence

// Settle returns the fences a device is in after a fix at lat, lon with
// an accuracy of acc metres, given before, the fences it was in: hits
// (the fences containing the fix), except that a fence whose edge lies
// within margin × acc of the fix keeps the device's membership as it
// was. So a device must be inside by more than margin times the fix's
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

// straddles reports whether a fix at lat, lon with an accuracy of acc
// metres (within the fence's limit) lies within margin × acc of f's edge.
func (f *Fence) straddles(lat, lon, acc, margin, limit float64) bool {
	if f.HasMaxAccuracy {
		limit = f.MaxAccuracy
	}
	return acc <= limit && f.EdgeDistance(lat, lon) <= margin*acc
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
