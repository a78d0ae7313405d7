package evaluator

import (
	"math"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/gate"
	"github.com/edgefence/edgefence/evaluator/history"
	"github.com/edgefence/edgefence/evaluator/hold"
	"github.com/edgefence/edgefence/evaluator/presence"
	"github.com/edgefence/edgefence/evaluator/reorder"
	"github.com/edgefence/edgefence/evaluator/still"
)

// noTime marks an unset event time or deadline.
const noTime = math.MinInt64

// device is one device's clock model, reorder buffer, history and fence
// state. Only its shard's goroutine touches it. Times named *At are
// processor-relative monotonic nanoseconds; high, wm and done are on the
// device's timeline (see clock.Model), in Unix nanoseconds. A million devices
// is the design point: docs/clock.md gives its size.
type device struct {
	id     string
	buf    reorder.Heap
	states presence.States
	// History: its committed pings, oldest first (see commit), and its
	// late pings waiting to be reconciled (usually none).
	history.History
	clk  clock.Model
	gate gate.State // the speed gate's: the last accepted fix, and any set aside since
	spot still.Spot // where its fixes have stayed, and since when: whether it stands still

	high     int64 // high-water mark, never beyond the model's clock plus the skew tolerance
	wm       int64 // watermark: pings after it wait in the buffer
	done     int64 // the last committed instant: pings at or before it are late
	highAt   int64 // arrival of the ping that set high: clock estimate and idleness
	holdUs   int32 // allowed lateness in µs; per device so it can be widened
	seq      uint32
	slot     int32 // index in Processor.all
	lat, lon int32 // last position in fixed point (history.Fixed), for a DWELL fired while silent
	// trimmed is set once the history lost its oldest point (or a
	// restart's state stands before it): a ping before its first is then
	// beyond it.
	// Last, in the record's tail padding.
	trimmed bool
	est     hold.Estimate // the adaptive hold's: 3 unaligned bytes, the rest of the padding
	// acc is the accuracy radius of the last evaluated ping in decimetres
	// (reorder.AccOf, as the buffer keeps it), 0 when it had none: what Home
	// Assistant is told with the position. It takes 2 of the 8 bytes the
	// record had left in its 288-byte allocation (docs/clock.md).
	acc uint16
	// recent are the device's last stamped pings: a QoS 1 redelivery of
	// one of them is dropped before it can teach the clock model anything.
	recent reorder.Recent
}

// hold returns the device's allowed lateness in nanoseconds.
func (d *device) hold() int64 { return int64(d.holdUs) * 1000 }

// estimate is the device's clock as best known at processor instant now:
// its high-water mark plus the monotonic time since that ping arrived.
func (d *device) estimate(now int64) int64 { return d.high + (now - d.highAt) }
