package reorder

// RecentPings is how many of its last pings a device recognises a
// redelivered copy of.
const RecentPings = 8

// Recent is a device's last stamped pings, as fingerprints of the stamp
// as sent and the position (33 bytes): a ping that matches one is a QoS 1
// redelivery, to be dropped before it is weighed. Exported for the
// snapshot (gob).
type Recent struct {
	Prints [RecentPings]uint32 // 0: empty
	Next   uint8               // where the next goes (mod RecentPings)
}

// Copy reports whether a ping stamped stamp (Unix ns, as sent) at lat,
// lon (fixed point) is a copy of one of r's, and otherwise remembers it.
func (r *Recent) Copy(stamp int64, lat, lon int32) bool {
	h := uint64(stamp)*0x9e3779b97f4a7c15 ^ uint64(uint32(lat))<<32 ^ uint64(uint32(lon))
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	f := uint32(h>>32) | 1
	for _, p := range r.Prints {
		if p == f {
			return true
		}
	}
	r.Prints[r.Next%RecentPings] = f
	r.Next++
	return false
}
