// Package snapshot holds the engine's state as plain data: what
// evaluator.Processor.Snapshot returns and evaluator.RestoreProcessor
// takes, and a scale-out worker stores (gob) between owners.
package snapshot

import (
	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/gate"
	"github.com/edgefence/edgefence/evaluator/history"
	"github.com/edgefence/edgefence/evaluator/presence"
	"github.com/edgefence/edgefence/evaluator/reorder"
	"github.com/edgefence/edgefence/evaluator/still"
)

// State is an evaluator.Processor's whole device state with exported fields: what
// a scale-out worker checkpoints so that the next owner of a partition
// resumes exactly where it stood (evaluator.RestoreProcessor) and, fed the same
// pings at the same instants, decides the same transitions. Metrics and
// scratch are not in it.
type State struct {
	// Devices in the processor's sweep order.
	Devices []Device
	// Timers are the queued deadlines: device index in Devices and the
	// processor-relative instant.
	Timers []Timer
	// Dwells are the queued DWELL deadlines, as Timers.
	Dwells []Timer
	Cursor int
}

// Timer is one queued deadline of a State.
type Timer struct {
	At     int64
	Device int32
}

// Device is one device's state (see the evaluator's device record).
type Device struct {
	ID      string
	Buf     []reorder.Held
	States  []presence.State
	Hist    []history.Point
	Late    *history.Batch
	Owed    []presence.Owed // DWELLs owed apart from its states (presence.Owing)
	Trimmed bool
	Clock   clock.ModelSnapshot
	Gate    gate.State // the speed gate's
	Spot    still.Spot // where it has stood, and since when

	High, WM, Done, HighAt int64
	HoldUs                 int32
	Seq                    uint32
	Lat, Lon               int32  // fixed point (history.Fixed)
	Hold                   uint32 // the adaptive hold's estimate (hold.Estimate.Bits)
	Acc                    uint16 // the last evaluated ping's accuracy, decimetres (0: none)
	// Recent are its last stamped pings: a redelivered copy after a
	// hand-over is still one.
	Recent reorder.Recent
}
