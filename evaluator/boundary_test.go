package evaluator

import (
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// A stamp exactly the skew tolerance either side of "now minus 1024 GPS
// weeks" is a week-number rollover and is repaired; one nanosecond further
// out is not (here it is then before the floor and replaced by the ingest
// time), so both edges of the repair window are inclusive.
func TestClampWeekRolloverWindowEdges(t *testing.T) {
	cfg := engine.DefaultConfig()
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
			pg := engine.NewPing(c, "rolled", &pos, t0)
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
			// Both released (the second at +3.5s, its hold), and the
			// timer's instant, +3s on the clock after the hold, is a
			// nanosecond later when nothing confirmed it.
			h.at(ms(3500))
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
