package engine

import (
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// MaxDeviceID is the longest device id, in bytes, the ingest path hands
// the engine: the outputs put an id into a topic level, so it is bounded
// where it is read and where it is written with this one constant.
const MaxDeviceID = 128

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
