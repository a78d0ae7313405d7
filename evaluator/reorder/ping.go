package reorder

import (
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
)

// HeldOf keeps what a reorder buffer needs of p, whose ingest wall clock
// reading is wall (Unix ns: the caller has it already) and which arrived
// at processor instant arrived.
func HeldOf(p *engine.Ping, wall, arrived int64) Held {
	h := Held{Lat: p.Lat, Lon: p.Lon, Event: p.Event, Arrived: arrived, Wall: wall, Stamp: p.Stamp, Clamp: p.Clamp,
		Source: p.Source, Seq: p.Seq, HasSeq: p.HasSeq}
	if p.HasAcc {
		h.Acc = AccOf(p.Acc)
	}
	return h
}

// Ping fills *dst with h, a buffered ping of device id, and returns its
// arrival. Its Ingest has the wall reading it was taken with but no
// monotonic one: the processor's own clock is the arrival, and a latency
// measured from Ingest outside it reads the wall clock, which is off
// only for a ping held while the clock was stepped.
func (h *Held) Ping(dst *engine.Ping, id string) int64 {
	*dst = engine.Ping{
		Device: id, Lat: h.Lat, Lon: h.Lon, Clamp: h.Clamp, Event: h.Event,
		Stamp: h.Stamp, HasStamp: h.Clamp != clock.ClampMissing,
		Source: h.Source, Seq: h.Seq, HasSeq: h.HasSeq,
		Ingest: time.Unix(0, h.Wall),
		Acc:    h.Accuracy(), HasAcc: h.Acc > 0,
	}
	return h.Arrived
}
