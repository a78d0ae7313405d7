package evaluator

import (
	"time"

	"github.com/edgefence/edgefence/evaluator/payload"
)

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
	event    int64 // on the device's timeline, Unix ns
	arrived  int64 // processor-relative monotonic ns (Ping.arrived)
	wall     int64 // the ingest instant's wall clock, Unix ns
	stamp    int64 // the device's clock reading (Ping.Stamp as judged)
	seq      uint32
	clamp    ClampReason
	source   payload.TimeSource
	hasSeq   bool
}

// heldOf keeps what the buffer needs of p, whose ingest wall clock
// reading is wall (Unix ns: the caller has it already).
func heldOf(p *Ping, wall int64) held {
	return held{lat: p.Lat, lon: p.Lon, event: p.Event, arrived: p.arrived, wall: wall, stamp: p.Stamp, clamp: p.Clamp,
		source: p.Source, seq: p.Seq, hasSeq: p.HasSeq}
}

// ping fills *dst with the buffered ping of device id. Its Ingest has the
// wall reading it was taken with but no monotonic one: the processor's
// own clock is arrived, and a latency measured from Ingest outside it
// reads the wall clock, which is off only for a ping held while the clock
// was stepped.
func (h *held) ping(dst *Ping, id string) {
	*dst = Ping{
		Device: id, Lat: h.lat, Lon: h.lon, Clamp: h.clamp, Event: h.event,
		Stamp: h.stamp, HasStamp: h.clamp != ClampMissing,
		Source: h.source, Seq: h.seq, HasSeq: h.hasSeq,
		Ingest: time.Unix(0, h.wall), arrived: h.arrived,
	}
}

// less orders pings by event time; equal stamps fall back to the
// device's sequence numbers when both have one (LoRaWAN's frame counter:
// codecs stamp whole seconds), then to arrival, so a device's duplicates
// keep their arrival order.
func (h *held) less(o *held) bool {
	if h.event != o.event {
		return h.event < o.event
	}
	if h.hasSeq && o.hasSeq && h.seq != o.seq {
		return h.seq < o.seq
	}
	return h.arrived < o.arrived
}

// pingHeap is a device's reorder buffer: a binary min-heap by event time.
// Hand-written rather than container/heap so that pushing never boxes a
// value into an interface.
type pingHeap []held

// push adds a buffered ping.
func (h *pingHeap) push(x *held) {
	*h = append(*h, *x)
	h.up(len(*h) - 1)
}

// up restores the heap order above index i.
func (h *pingHeap) up(i int) {
	s := *h
	for i > 0 {
		parent := (i - 1) / 2
		if !s[i].less(&s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

// pop removes the earliest ping into *dst, a ping of device id.
func (h *pingHeap) pop(dst *Ping, id string) {
	s := *h
	n := len(s) - 1
	s[0].ping(dst, id)
	s[0] = s[n]
	*h = s[:n]
	h.down(0)
}

// down restores the heap order below index i.
func (h *pingHeap) down(i int) {
	s := *h
	n := len(s)
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
}
