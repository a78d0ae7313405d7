// Package reorder is the engine's reorder buffering: a device's held
// pings ordered by event time (Heap), what of an engine.Ping it keeps
// (HeldOf, Held.Ping) and a shard's queue of hold deadlines (Deadlines).
// Neither knows devices or the state machine.
package reorder

import (
	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// Held is a buffered ping: what the state machine needs of it once the
// hold lets it go. The device is the buffer's own. 64 bytes against a
// Ping's 120, and no
// pointers: at 8.8 Hz and the default hold a device buffers 4-5 pings,
// which now span half the cache lines (each ping is pushed on arrival and
// read again on release, long after its device left the cache), and the
// collector no longer scans the buffers.
type Held struct {
	Lat, Lon float64
	Event    int64  // on the device's timeline, Unix ns
	Arrived  int64  // processor-relative monotonic ns
	Wall     int64  // the ingest instant's wall clock, Unix ns
	Stamp    int64  // the device's clock reading, as judged
	Seq      uint32 // the device's sequence number (LoRaWAN fCnt), when HasSeq
	Clamp    clock.ClampReason
	Source   payload.TimeSource
	HasSeq   bool
	// Acc is the fix's accuracy in decimetres (0: none), at most MaxAcc.
	Acc uint16
	// HoldUs is its device's hold when it arrived, in µs: it is released
	// at Arrived + that at the latest, whatever the hold became since.
	HoldUs uint32
}

// MaxAcc is the largest accuracy Held keeps, in decimetres (6,553.5 m):
// an accuracy beyond it is as uninformative.
const MaxAcc = 1<<16 - 1

// AccOf encodes an accuracy in metres for Held.Acc.
func AccOf(m float64) uint16 {
	if !(m > 0) {
		return 0
	}
	return uint16(min(m*10+0.5, MaxAcc))
}

// Accuracy returns Acc in metres.
func (h *Held) Accuracy() float64 { return float64(h.Acc) / 10 }

// Deadline returns the processor instant by which the ping is released.
func (h *Held) Deadline() int64 { return h.Arrived + int64(h.HoldUs)*1000 }

// Less orders pings by event time; equal stamps fall back to the
// device's sequence numbers when both have one (LoRaWAN's frame counter:
// codecs stamp whole seconds), then to arrival, so a device's duplicates
// keep their arrival order.
func (h *Held) Less(o *Held) bool {
	if h.Event != o.Event {
		return h.Event < o.Event
	}
	if h.HasSeq && o.HasSeq && h.Seq != o.Seq {
		return h.Seq < o.Seq
	}
	return h.Arrived < o.Arrived
}

// Heap is a device's reorder buffer: a binary min-heap by event time
// (Held.Less), earliest first at index 0. Hand-written rather than
// container/heap so that pushing never boxes a value into an interface.
type Heap []Held

// Push adds a buffered ping.
func (h *Heap) Push(x *Held) {
	*h = append(*h, *x)
	h.up(len(*h) - 1)
}

// up restores the heap order above index i.
func (h *Heap) up(i int) {
	s := *h
	for i > 0 {
		parent := (i - 1) / 2
		if !s[i].Less(&s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

// Pop removes the earliest ping, (*h)[0], which the caller has read; the
// heap must not be empty.
func (h *Heap) Pop() {
	s := *h
	n := len(s) - 1
	s[0] = s[n]
	*h = s[:n]
	h.down(0)
}

// Init restores the heap order after the pings' event times were changed
// in place.
func (h *Heap) Init() {
	for i := len(*h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// down restores the heap order below index i.
func (h *Heap) down(i int) {
	s := *h
	n := len(s)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].Less(&s[l]) {
			m = r
		}
		if !s[m].Less(&s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
}

// MoveBoot moves the pings of a provisionally anchored counting clock
// (ClampBeforeFloor) among hs, received since since, by delta on the
// timeline, and reports whether it moved any (a Heap must then be
// re-established with Init).
func MoveBoot(hs []Held, since, delta int64) bool {
	moved := false
	for i := range hs {
		if h := &hs[i]; h.Arrived >= since && h.Clamp == clock.ClampBeforeFloor {
			h.Event += delta
			h.Stamp += delta
			moved = true
		}
	}
	return moved
}
