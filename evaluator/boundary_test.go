package evaluator

import (
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// awaitTransition waits at most within for the sink's next transition and
// fails unless it is dev's typ in fenceID. It bounds how long the test may
// wait; it does not measure latency.
func awaitTransition(t *testing.T, sink *chanSink, dev, fenceID string, typ Type, within time.Duration) Transition {
	t.Helper()
	var tr Transition
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
	e := newEngine(t, sink, func(c *Config) { c.Shards = 1; c.Hold = ms(50); c.Sweep = time.Hour })
	submit(t, e, "parked", inDepot, time.Now())
	// Only the timer can release it: no other ping, no sweep for an hour.
	awaitTransition(t, sink, "parked", "depot", Enter, 3*time.Second)
	submit(t, e, "parked", outside, time.Now())
	awaitTransition(t, sink, "parked", "depot", Exit, 3*time.Second)
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
	e := newEngine(t, sink, func(c *Config) { c.Shards = 1; c.Hold = ms(50); c.Sweep = time.Hour })
	if err := e.SetHold("shaky", MaxHold); err != nil {
		t.Fatal(err)
	}
	submit(t, e, "shaky", inDepot, time.Now()) // the timer is armed MaxHold ahead
	submit(t, e, "steady", inYard, time.Now())
	awaitTransition(t, sink, "steady", "yard", Enter, 3*time.Second)
	e.Close() // flushes shaky's buffered ping
	awaitTransition(t, sink, "shaky", "depot", Enter, 0)
}

// A stamp exactly the skew tolerance either side of "now minus 1024 GPS
// weeks" is a week-number rollover and is repaired; one nanosecond further
// out is not (here it is then before the floor and replaced by the ingest
// time), so both edges of the repair window are inclusive.
func TestClampWeekRolloverWindowEdges(t *testing.T) {
	cfg := DefaultConfig()
	c := cfg.Clamper()
	wall := t0.UnixNano()
	rolled := wall - int64(clock.WeekRollover)
	skew := int64(cfg.Skew)
	for _, tc := range []struct {
		name   string
		stamp  int64
		want   int64
		reason clock.ClampReason
	}{
		{"upper edge", rolled + skew, wall + skew, clock.ClampWeekRollover},
		{"one ns past the upper edge", rolled + skew + 1, wall, clock.ClampBeforeFloor},
		{"lower edge", rolled - skew, wall - skew, clock.ClampWeekRollover},
		{"one ns past the lower edge", rolled - skew - 1, wall, clock.ClampBeforeFloor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pos := payload.Position{Lat: inDepot.lat, Lon: inDepot.lon, TsNs: tc.stamp, HasTs: true}
			pg := NewPing(c, "rolled", &pos, t0)
			if pg.Event != tc.want || pg.Clamp != tc.reason {
				t.Fatalf("event %v, clamp %q; want %v, %q",
					time.Unix(0, pg.Event).Sub(t0), pg.Clamp, time.Unix(0, tc.want).Sub(t0), tc.reason)
			}
			if pg.Stamp != tc.stamp || !pg.HasStamp {
				t.Fatalf("stamp as received = %d %v, want %d true", pg.Stamp, pg.HasStamp, tc.stamp)
			}
		})
	}
}

// A ping stamped exactly at ENTER + dwell confirms the DWELL (the dwell has
// been served), and one stamped a nanosecond before does not: the "zone"
// fence's 3 s dwell is inclusive.
func TestDwellConfirmedByPingAtExactlyEnterPlusDwell(t *testing.T) {
	for _, tc := range []struct {
		name  string
		event time.Duration
		want  []string
	}{
		{"at enter + dwell", 3 * time.Second,
			[]string{"truck-1 depot ENTER +0s", "truck-1 zone ENTER +0s", "truck-1 zone DWELL +3s"}},
		{"one ns before", 3*time.Second - 1,
			[]string{"truck-1 depot ENTER +0s", "truck-1 zone ENTER +0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.send("truck-1", inDepotZ, 0, 0)
			h.send("truck-1", inDepotZ, tc.event, 3*time.Second)
			h.at(5 * time.Second) // both released; no sweep, so no timer DWELL
			h.want(tc.want...)
		})
	}
}

// A device outside every fence that has been silent for exactly the idle
// timeout is evicted by the sweep at that instant, and one nanosecond
// earlier it is kept: the idle timeout is inclusive.
func TestIdleDeviceEvictedAtExactlyTheIdleTimeout(t *testing.T) {
	h := newHarness(t, nil)
	h.send("idle", outside, 0, 0)
	h.at(time.Second) // released: nothing buffered
	h.proc.Sweep(t0.Add(h.cfg.IdleTimeout - 1))
	if n := h.proc.Devices(); n != 1 {
		t.Fatalf("devices = %d one ns before the idle timeout, want 1", n)
	}
	h.proc.Sweep(t0.Add(h.cfg.IdleTimeout))
	if n := h.proc.Devices(); n != 0 {
		t.Fatalf("devices = %d at exactly the idle timeout, want 0 (evicted)", n)
	}
	if got := h.m.Evicted.Get(); got != 1 {
		t.Fatalf("evicted = %d, want 1", got)
	}
}
