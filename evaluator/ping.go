package evaluator

import (
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/evaluator/reorder"
)

// Ping is one position report on its way through the engine. It carries both
// timelines: Event (the device's stamp, possibly clamped) decides ordering;
// Ingest (the server's clock right after decoding, with its monotonic
// reading) measures every latency and is what a clamped stamp is set to.
type Ping struct {
	Device string
	Lat    float64
	Lon    float64
	Acc    float64 // metres; meaningful only when HasAcc
	HasAcc bool

	// Clamp says why Event is not the device's own stamp (ClampNone when it is).
	Clamp clock.ClampReason
	// Event is the event time in Unix nanoseconds after clamping.
	Event int64
	// Stamp is the device's stamp as received, in Unix nanoseconds
	// (meaningful only when HasStamp), kept for the late and reject outputs.
	Stamp    int64
	HasStamp bool
	// Source is the clock Stamp was read from (payload.SourceUnset for
	// canonical and OwnTracks pings).
	Source payload.TimeSource
	// Seq is the device's own sequence number (LoRaWAN's frame counter),
	// meaningful only when HasSeq: it orders pings whose event times tie.
	Seq    uint32
	HasSeq bool

	// Ingest is the server instant taken once, right after decoding.
	Ingest time.Time

	// arrived is Ingest in processor-relative nanoseconds, computed once
	// when the ping is buffered: hold deadlines are checked often.
	arrived int64
}

// EventTime returns the event time as a time.Time in UTC.
func (p *Ping) EventTime() time.Time { return time.Unix(0, p.Event).UTC() }

// NewPing builds the engine's record of a decoded position received from
// device at ingest, its stamp clamped by c.
func NewPing(c clock.Clamper, device string, pos *payload.Position, ingest time.Time) Ping {
	p := Ping{
		Device:   device,
		Lat:      pos.Lat,
		Lon:      pos.Lon,
		Acc:      pos.Acc,
		HasAcc:   pos.HasAcc,
		Stamp:    pos.TsNs,
		HasStamp: pos.HasTs,
		Source:   pos.Source,
		Seq:      pos.Seq,
		HasSeq:   pos.HasSeq,
		Ingest:   ingest,
	}
	p.Event, p.Clamp = c.Stamp(pos.TsNs, pos.HasTs, ingest.UnixNano())
	return p
}

// heldOf keeps what a reorder buffer needs of p, whose ingest wall clock
// reading is wall (Unix ns: the caller has it already).
func heldOf(p *Ping, wall int64) reorder.Held {
	h := reorder.Held{Lat: p.Lat, Lon: p.Lon, Event: p.Event, Arrived: p.arrived, Wall: wall, Stamp: p.Stamp, Clamp: p.Clamp,
		Source: p.Source, Seq: p.Seq, HasSeq: p.HasSeq}
	if p.HasAcc {
		h.Acc = reorder.AccOf(p.Acc)
	}
	return h
}

// heldPing fills *dst with h, a buffered ping of device id. Its Ingest
// has the wall reading it was taken with but no monotonic one: the
// processor's own clock is arrived, and a latency measured from Ingest
// outside it reads the wall clock, which is off only for a ping held
// while the clock was stepped.
func heldPing(h *reorder.Held, dst *Ping, id string) {
	*dst = Ping{
		Device: id, Lat: h.Lat, Lon: h.Lon, Clamp: h.Clamp, Event: h.Event,
		Stamp: h.Stamp, HasStamp: h.Clamp != clock.ClampMissing,
		Source: h.Source, Seq: h.Seq, HasSeq: h.HasSeq,
		Ingest: time.Unix(0, h.Wall), arrived: h.Arrived,
		Acc: h.Accuracy(), HasAcc: h.Acc > 0,
	}
}
