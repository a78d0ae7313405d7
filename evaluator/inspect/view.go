// Package inspect is the engine's introspection: read-only views of one
// device, or of every device, filled by the engine's owner (a Processor,
// on its shard like any other per-device work), so the per-device path
// takes no lock and keeps no extra memory for them. Everything here is a
// copy: a view stays valid after the engine is let go. A device being
// inspected keeps its last arrivals in a Watchlist.
package inspect

import (
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
)

// DeviceView is one device's engine state at one instant.
type DeviceView struct {
	Device string
	// Taken is the server's wall clock when the view was taken.
	Taken time.Time
	// Hold is the device's allowed lateness.
	Hold time.Duration
	// HighWater, Watermark and Committed are on the device's timeline
	// (its stamps with detected steps taken out); zero before any ping.
	// Pings stamped after Watermark wait in the buffer; those at or
	// before Committed are late.
	HighWater, Watermark, Committed time.Time
	// WatermarkLag is how far the watermark trails the server's clock,
	// with the device's clock offset taken out: about the time since the
	// device's last ping plus the hold. Zero before any ping.
	WatermarkLag time.Duration
	// ClockOffset is the device's clock minus the server's, as learned
	// (what transitions carry as clock_offset_ms); ClockShift the sum of
	// the clock steps detected; ClockState one of unknown, learning,
	// locked, stepping.
	ClockOffset time.Duration
	ClockShift  time.Duration
	ClockState  string
	// Buffered pings wait in the reorder buffer (of BufferCap); Deferred
	// late pings wait to be reconciled into the history.
	Buffered, BufferCap, Deferred int
	// Evaluated counts the pings the state machine has seen (wrapping at
	// 2³²); LastArrival is when the ping that set HighWater arrived.
	Evaluated   uint32
	LastArrival time.Time
	// Lat, Lon: the last position evaluated (rounded to 1e-7° like every
	// ping); HasPosition is false until one was.
	Lat, Lon    float64
	HasPosition bool
	// Pending are the buffered pings in event order; History the
	// committed pings the device's history keeps, oldest first.
	Pending []PendingPing
	History []CommittedPing
	// Received are the pings that arrived since the device was first
	// inspected (the last 32, in arrival order), with their stamps as
	// sent and why each was clamped: inspecting a device starts keeping
	// them, for ten minutes after the last look.
	Received []ReceivedPing
	// Fences is the device's state per fence it is or was just in.
	Fences []FenceView
}

// PendingPing is a ping waiting in a reorder buffer.
type PendingPing struct {
	Event  time.Time // on the device's timeline
	Stamp  time.Time // the device's clock reading (for a clamped ping, the model's)
	Ingest time.Time // the server's wall clock at ingest
	Clamp  clock.ClampReason
	Lat    float64
	Lon    float64
}

// CommittedPing is a ping the state machine has seen, as its device's
// history keeps it.
type CommittedPing struct {
	Event    time.Time // on the device's timeline
	Ingest   time.Time
	Lat, Lon float64
	Acc      float64 // metres; 0: none
	// SetAside says the speed gate set the fix aside: an impossible jump
	// from the fix accepted before it (docs/fences.md).
	SetAside bool
	// Rule names what decided the device's fence membership at this fix
	// (docs/clock.md, "Which rule decided a fix"): RulePosition,
	// RuleMargin (Held lists the fences whose state the accuracy margin
	// kept against the position), RuleStill, RuleConfirm, RuleGate,
	// RuleReplayed or RuleKept.
	Rule string
	Held []string
	// Standing says the device stood still at this fix (docs/fences.md).
	Standing bool
}

// The rules a committed fix's membership was decided by.
const (
	// RulePosition: the fences containing the fix.
	RulePosition = "position"
	// RuleMargin: as RulePosition, but the fences in Held kept their state,
	// an edge lying within the fix's accuracy margin.
	RuleMargin = "accuracy_margin"
	// RuleStill: the device stood still at the fix; the fences in Held
	// kept their state against it.
	RuleStill = "standing_still"
	// RuleConfirm: the fences in Held kept their state, the fix before
	// this one lying on their old side (a change needs two fixes that
	// agree), or an edge within the margin.
	RuleConfirm = "confirmation"
	// RuleGate: the speed gate set the fix aside; it decided nothing.
	RuleGate = "speed_gate"
	// RuleReplayed: a late fix, or one settled before points recorded it,
	// whose membership is replayed from the fixes before it when needed.
	RuleReplayed = "replayed"
	// RuleKept: a late fix whose change a transition published later
	// stands for; Held is the published state it keeps.
	RuleKept = "kept"
)

// FenceView is a device's state in one fence.
type FenceView struct {
	Fence   string
	Inside  bool
	Dwelled bool
	// Since is the event time of the ENTER (inside), on the device's
	// timeline.
	Since time.Time
}

// DeviceSummary is the part of a device's state the fleet view sorts on,
// without its pings.
type DeviceSummary struct {
	Device       string
	WatermarkLag time.Duration
	ClockOffset  time.Duration
	ClockState   string
	Buffered     int
	Deferred     int
	Evaluated    uint32
	// Decided is set once the engine has decided where the device is: a
	// ping of it evaluated, or its state restored at start; not while its
	// first pings wait in the reorder buffer.
	Decided     bool
	LastArrival time.Time
	Lat, Lon    float64
	HasPosition bool
	// Acc is the accuracy radius of the last evaluated ping in metres, to
	// the decimetre the engine keeps, 0 when it had none (or it came
	// before a restart): a float32, so that 12.3 prints as 12.3.
	Acc    float32
	Inside []string // fences the device is inside, by ID
}

// ReceivedPing is a ping as it arrived, before the reorder buffer: its
// stamp as sent and as judged, and why it was clamped.
type ReceivedPing struct {
	Event  time.Time // on the device's timeline, after clamping
	Stamp  time.Time // as sent (zero when the ping had none)
	Ingest time.Time
	Clamp  clock.ClampReason
	Lat    float64
	Lon    float64
}
