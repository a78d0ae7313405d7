package evaluator

import "time"

// held is a buffered ping: what the state machine needs of it once the
// hold lets it go. The device is the buffer's own, and the stamp as
// received and the accuracy only ever reach the late output, which takes
// pings before they are buffered. 48 bytes against a Ping's 104, and no
// pointers: at 8.8 Hz and the default hold a device buffers 4-5 pings,
// which now span half the cache lines (each ping is pushed on arrival and
// read again on release, long after its device left the cache), and the
// collector no longer scans the buffers.
type held struct {
	lat, lon float64
	event    int64 // event time after clamping, Unix ns
	arrived  int64 // processor-relative monotonic ns (Ping.arrived)
	wall     int64 // the ingest instant's wall clock, Unix ns
	clamp    ClampReason
}

// less orders pings by event time; equal stamps fall back to arrival so
// a device's duplicates keep their arrival order.
func (h *held) less(o *held) bool {
	if h.event != o.event {
		return h.event < o.event
	}
	return h.arrived < o.arrived
}

// pingHeap is a device's reorder buffer: a binary min-heap by event time.
// Hand-written rather than container/heap so that pushing never boxes a
// value into an interface.
type pingHeap []held

// push adds p, whose ingest wall clock reading is wall (Unix ns: the
// caller has it already).
func (h *pingHeap) push(p *Ping, wall int64) {
	*h = append(*h, held{lat: p.Lat, lon: p.Lon, event: p.Event, arrived: p.arrived, wall: wall, clamp: p.Clamp})
	s := *h
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !s[i].less(&s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

// pop removes the earliest ping into *dst, a ping of device id. Its
// Ingest has the wall reading it was taken with but no monotonic one:
// the processor's own clock is arrived, and a latency measured from
// Ingest outside it reads the wall clock, which is off only for a ping
// held while the clock was stepped.
func (h *pingHeap) pop(dst *Ping, id string) {
	s := *h
	n := len(s) - 1
	top := &s[0]
	*dst = Ping{
		Device: id, Lat: top.lat, Lon: top.lon, Clamp: top.clamp, Event: top.event,
		Ingest: time.Unix(0, top.wall), arrived: top.arrived,
	}
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].less(&s[l]) {
			m = r
		}
		if !s[m].less(&s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
}
