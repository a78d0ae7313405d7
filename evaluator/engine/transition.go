// Package engine is what the geofence engine and its users share: the
// Config it runs with, the Ping it takes, and the Transition and Late
// reports it gives to a Sink. It knows nothing of how the engine decides:
// that is evaluator's Processor (one owner's devices) and
// evaluator/sharded's Engine (Processors in shards).
package engine

import (
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// Type is the kind of a fence transition.
type Type uint8

// Transition types.
const (
	Enter Type = iota
	Exit
	Dwell
)

// NumTypes is how many transition types there are: the length of an
// array indexed by Type.
const NumTypes = 3

var typeNames = [NumTypes]string{"ENTER", "EXIT", "DWELL"}

// String returns ENTER, EXIT or DWELL.
func (t Type) String() string {
	if t < NumTypes {
		return typeNames[t]
	}
	return "UNKNOWN"
}

// ParseType is the inverse of Type.String.
func ParseType(s string) (Type, bool) {
	for i, n := range typeNames {
		if n == s {
			return Type(i), true
		}
	}
	return 0, false
}

// Types lists every transition type, for pre-creating metrics.
func Types() []Type { return []Type{Enter, Exit, Dwell} }

// Transition is a committed change of one device's state in one fence.
// A device's transitions are emitted strictly in event-time order.
type Transition struct {
	Device string
	Fence  string // the fence's ID
	Type   Type
	// Event is the event time in Unix nanoseconds on the device's
	// timeline (its clock with the steps detected taken out): the causing
	// ping's, or for DWELL the instant the dwell time was reached. It
	// orders a device's transitions.
	Event int64
	// Stamp is the device's own stamp of the causing ping, as sent or
	// repaired for a week rollover; for a clamped stamp, the device's
	// clock as its model had it at ingest.
	Stamp int64
	// Offset is the device's clock minus the server's, as the model had
	// it when deciding: Stamp − Offset is the event on the server's clock.
	Offset int64
	// Lat and Lon are the position that caused it (for DWELL, the latest
	// position inside the fence).
	Lat, Lon float64
	// Acc is the causing ping's accuracy radius in metres, to the
	// decimetre the engine keeps (reorder.AccOf); 0 when it had none, and
	// on a DWELL.
	Acc float64
	// Clamp is the clamp reason of the causing ping's stamp.
	Clamp clock.ClampReason
	// Source is the clock the causing ping's stamp was read from
	// (SourceUnset for a DWELL and for canonical and OwnTracks pings).
	Source payload.TimeSource
	// Ingest is the ingest instant of the causing ping, for SLA figures.
	Ingest time.Time
	// Decided is the instant the engine committed the transition (on the
	// monotonic clock in a live engine, virtual time in a simulation).
	Decided time.Time
	// Timer is set on a DWELL fired by the device's estimated clock rather
	// than by a ping; its Ingest is that of the last ping and says nothing
	// about latency.
	Timer bool
	// Historic is set on a transition that late pings revealed after
	// newer ones had decided the device's current state: it happened, in
	// the past, and changes nothing now (never retained).
	Historic bool
	// Reversal is set when this transition undoes the one committed for the
	// same device and fence on the previous in-order ping.
	Reversal bool
	// Reason explains a transition no ping caused: ReasonFenceRemoved for
	// the EXIT of a fence that a reload removed.
	Reason string
}

// ReasonFenceRemoved marks the EXIT of every device inside a fence that
// is no longer in the fence set.
const ReasonFenceRemoved = "fence_removed"

// EventTime returns Event as a time.Time in UTC.
func (t *Transition) EventTime() time.Time { return time.Unix(0, t.Event).UTC() }

// LateReason says why a ping was diverted to the late output.
type LateReason uint8

// Late reasons.
const (
	// LateBehindWatermark: the ping's event time was at or behind its
	// device's watermark when it arrived, so evaluating it would rewrite
	// history already committed.
	LateBehindWatermark LateReason = iota + 1
	// LateBeforeHistory: the ping was stamped before the oldest committed
	// ping its device's history keeps, so it cannot be placed.
	LateBeforeHistory
)

// String returns the reason's label.
func (r LateReason) String() string {
	switch r {
	case LateBehindWatermark:
		return "behind_watermark"
	case LateBeforeHistory:
		return "before_history"
	}
	return "unknown"
}

// Late is a ping that never reached the state machine and that its
// device's history could not place.
type Late struct {
	Ping      Ping
	Reason    LateReason
	Watermark int64 // the device's watermark when it arrived, Unix ns
}

// Sink receives the engine's output. The engine calls it from whichever
// goroutine owns a shard at the time — its own, or a client's inside
// sharded.Engine.Submit — so an implementation must be safe for
// concurrent use and should not block for long (a blocked owner makes the
// shard's queue fill, and Submit refuse); the pointers are valid only
// during the call. Calls for one device are sequential and in event-time
// order.
type Sink interface {
	Transition(t *Transition)
	Late(l *Late)
}
