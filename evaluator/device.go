package evaluator

import (
	"math"
	"time"

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

// raise moves the high-water mark to event, received at wall (processor
// instant now). It never passes the model's clock plus the skew
// tolerance, so one glitch cannot make later good pings late.
func (d *device) raise(event, wall, now, skew int64) {
	ceiling := wall + skew
	if d.clk.Known() {
		ceiling += max(d.clk.Off(), 0)
	}
	if hw := min(event, ceiling); hw > d.high {
		d.high = hw
		d.highAt = now
	}
}

// adapt updates the device's adaptive hold with its ping just judged v
// at event, before the ping is placed: a late ping's own deadline is
// already the wider one.
func (d *device) adapt(v clock.Verdict, event int64, pol *hold.Policy) {
	if v == clock.Stepped || d.clk.Pending() <= -2 {
		// A step, or a step back being told from delayed pings (two agree):
		// the clock is not stable. Widening on any candidate cost latency
		// and bought nothing: one delayed ping makes a candidate.
		d.est.Widen(pol)
	}
	var late time.Duration
	if d.high != noTime && event < d.high {
		late = time.Duration(d.high - event)
	}
	d.est.Observe(late, pol)
	d.holdUs = int32(d.est.Hold(pol) / time.Microsecond)
}

// lateDue reports whether the device's late batch is to be reconciled at
// processor instant now, HistoryWait being wait (history.Batch.DueTelling).
func (d *device) lateDue(now, wait int64) bool {
	return d.Late.DueTelling(now, wait, d.clk.Pending(), d.highAt > d.Late.First)
}

// markStep tells the clock model that the step it just found (from shift
// shift0) began where the old generation's freshest ping, the high-water
// mark, stood.
func (d *device) markStep(shift0 int64) {
	end := d.high
	if end == noTime {
		end = 0
	}
	d.clk.MarkStep(shift0, end)
}

// moveBoot moves the pings of a provisionally anchored counting clock,
// received since processor instant since, by delta on the timeline,
// wherever they wait.
func (d *device) moveBoot(since, delta int64) {
	if reorder.MoveBoot(d.buf, since, delta) {
		d.buf.Init()
	}
	if d.Late != nil {
		reorder.MoveBoot(d.Late.Pings, since, delta)
	}
}
