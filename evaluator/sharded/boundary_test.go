package sharded

import (
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
)

// awaitTransition waits at most within for the sink's next transition and
// fails unless it is dev's typ in fenceID. It bounds how long the test may
// wait; it does not measure latency.
func awaitTransition(t *testing.T, sink *chanSink, dev, fenceID string, typ engine.Type, within time.Duration) engine.Transition {
	t.Helper()
	var tr engine.Transition
	select {
	case tr = <-sink.trans: // already there: a zero wait still finds it
	default:
		timeout := time.NewTimer(within)
		defer timeout.Stop()
		select {
		case tr = <-sink.trans:
		case <-timeout.C:
			t.Fatalf("no %s %s %v within %v", dev, fenceID, typ, within)
		}
	}
	if tr.Device != dev || tr.Fence != fenceID || tr.Type != typ {
		t.Fatalf("got %s %s %v, want %s %s %v", tr.Device, tr.Fence, tr.Type, dev, fenceID, typ)
	}
	return tr
}

// A parked device's ping is released at arrival + hold, whatever the sweep:
// after the shard's timer has fired once, the next ping must arm it again,
// or it would wait for the next sweep (an hour here) or shutdown.
func TestEngineParkedDeviceReleasedAtHoldAfterTimerFired(t *testing.T) {
	sink := newChanSink()
	e := newEngine(t, sink, func(c *engine.Config) { c.Shards = 1; c.Hold = ms(50); c.Sweep = time.Hour })
	submit(t, e, "parked", inDepot, time.Now())
	// Only the timer can release it: no other ping, no sweep for an hour.
	awaitTransition(t, sink, "parked", "depot", engine.Enter, 3*time.Second)
	submit(t, e, "parked", outside, time.Now())
	awaitTransition(t, sink, "parked", "depot", engine.Exit, 3*time.Second)
	e.Close()
	if n := len(sink.trans); n != 0 {
		t.Fatalf("%d more transitions after Close, want none", n)
	}
}

// A short hold is served on time even while the shard's timer is armed far
// ahead for another device's long per-device hold: the timer is re-armed for
// the earlier deadline, not left to the later one (or the hourly sweep).
func TestEngineTimerRearmedForEarlierDeadline(t *testing.T) {
	sink := newChanSink()
	e := newEngine(t, sink, func(c *engine.Config) { c.Shards = 1; c.Hold = ms(50); c.Sweep = time.Hour })
	if err := e.SetHold("shaky", engine.MaxHold); err != nil {
		t.Fatal(err)
	}
	submit(t, e, "shaky", inDepot, time.Now()) // the timer is armed MaxHold ahead
	submit(t, e, "steady", inYard, time.Now())
	awaitTransition(t, sink, "steady", "yard", engine.Enter, 3*time.Second)
	e.Close() // flushes shaky's buffered ping
	awaitTransition(t, sink, "shaky", "depot", engine.Enter, 0)
}

// A silent parked device's DWELL is a deadline of the shard's own: its
// timer wakes the shard for it, not the sweep (an hour here), and decides
// it once the device's clock has passed the DWELL's instant by the hold.
func TestEngineSilentDeviceDwellsOnItsTimerWithoutASweep(t *testing.T) {
	sink := newChanSink()
	e := newEngine(t, sink, func(c *engine.Config) { c.Shards = 1; c.Hold = ms(50); c.Dwell = ms(200); c.Sweep = time.Hour })
	now := time.Now()
	submit(t, e, "parked", inDepot, now)
	enter := awaitTransition(t, sink, "parked", "depot", engine.Enter, 3*time.Second)
	tr := awaitTransition(t, sink, "parked", "depot", engine.Dwell, 3*time.Second)
	if !tr.Timer || tr.Event != now.Add(ms(200)).UnixNano() {
		t.Fatalf("DWELL %+v, want a timer DWELL at the ENTER + 200 ms", tr)
	}
	if due := enter.Ingest.Add(ms(250)); tr.Decided.Before(due) {
		t.Fatalf("DWELL decided at %v, before its deadline %v (ingest + dwell + hold)", tr.Decided, due)
	}
	e.Close()
}
