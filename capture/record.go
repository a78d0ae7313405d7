// Package capture records every ping the engine accepted to a JSON Lines
// file, so that a live session can be replayed through the engine later
// (under other holds, or after an engine change) with the exact stamps and
// arrival instants it had. The writer never blocks the broker: records go
// through a bounded queue to one goroutine, and a full queue drops them.
package capture

import (
	"strconv"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/internal/jsonstr"
)

// Record is one accepted ping as captured: the engine's Ping with both of
// its timelines kept exact, plus the arrival sequence number.
type Record struct {
	// Seq numbers the pings the broker accepted, from 1 in each run; a gap
	// is a record the capture dropped.
	Seq    uint64
	Device string
	Lat    float64 // degrees
	Lon    float64 // degrees
	Acc    float64 // metres; meaningful only when HasAcc
	// Stamp is the device's stamp as received, in Unix nanoseconds
	// (meaningful only when HasStamp).
	Stamp int64
	// Event is the event time the engine ordered the ping by (the stamp
	// after clamping), in Unix nanoseconds.
	Event int64
	// Ingest is the server's wall clock when the ping was decoded, in Unix
	// nanoseconds: the arrival instant a replay runs it at.
	Ingest int64
	// Clamp says why Event is not Stamp.
	Clamp    clock.ClampReason
	HasAcc   bool
	HasStamp bool
}

// FromPing captures an accepted ping as arrival number seq.
func FromPing(seq uint64, p *engine.Ping) Record {
	return Record{
		Seq:      seq,
		Device:   p.Device,
		Lat:      p.Lat,
		Lon:      p.Lon,
		Acc:      p.Acc,
		HasAcc:   p.HasAcc,
		Stamp:    p.Stamp,
		HasStamp: p.HasStamp,
		Event:    p.Event,
		Clamp:    p.Clamp,
		Ingest:   p.Ingest.UnixNano(),
	}
}

// Ping rebuilds the engine's ping. Its Ingest has no monotonic reading: a
// replay runs on the wall clock the capture recorded.
func (r *Record) Ping() engine.Ping {
	return engine.Ping{
		Device:   r.Device,
		Lat:      r.Lat,
		Lon:      r.Lon,
		Acc:      r.Acc,
		HasAcc:   r.HasAcc,
		Clamp:    r.Clamp,
		Event:    r.Event,
		Stamp:    r.Stamp,
		HasStamp: r.HasStamp,
		Ingest:   time.Unix(0, r.Ingest),
	}
}

// AppendJSON appends r as one JSON object (no newline), with strconv
// appends rather than encoding/json: it runs for every accepted ping.
// Floats are written in their shortest exact form, so they read back
// bit for bit; they must be finite, as the payload decoder guarantees.
func AppendJSON(b []byte, r *Record) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, r.Seq, 10)
	b = append(b, `,"device":`...)
	b = jsonstr.Append(b, r.Device)
	b = append(b, `,"lat":`...)
	b = strconv.AppendFloat(b, r.Lat, 'f', -1, 64)
	b = append(b, `,"lon":`...)
	b = strconv.AppendFloat(b, r.Lon, 'f', -1, 64)
	if r.HasAcc {
		b = append(b, `,"acc":`...)
		b = strconv.AppendFloat(b, r.Acc, 'f', -1, 64)
	}
	if r.HasStamp {
		b = append(b, `,"stamp":`...)
		b = strconv.AppendInt(b, r.Stamp, 10)
	}
	b = append(b, `,"event":`...)
	b = strconv.AppendInt(b, r.Event, 10)
	if r.Clamp != clock.ClampNone {
		b = append(b, `,"clamp":`...)
		b = jsonstr.Append(b, r.Clamp.String())
	}
	b = append(b, `,"ingest":`...)
	b = strconv.AppendInt(b, r.Ingest, 10)
	return append(b, '}')
}
