package clock

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestParseClampReasonInvertsString(t *testing.T) {
	for r := ClampNone; r < NumClampReasons; r++ {
		got, ok := ParseClampReason(r.String())
		if !ok || got != r {
			t.Errorf("ParseClampReason(%q) = %v, %v; want %v, true", r.String(), got, ok, r)
		}
	}
	if _, ok := ParseClampReason("unknown"); ok {
		t.Error(`ParseClampReason("unknown") succeeded`)
	}
}

// The engine's default floor, 2015-01-01: after epoch zero and the 1980
// GPS epoch of cold-booted trackers.
var floor = time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

var clamper = Clamper{Skew: 2 * time.Second, MaxAhead: 10 * time.Minute, Floor: floor}

// docs/clock.md: a stamp missing, before the floor or more than the
// largest clock offset ahead of the server is replaced (here by the
// server's clock; the engine then sets it to the device's model); one
// 1024 weeks behind within the skew tolerance is repaired; an old stamp
// is a backlog's and stands.
func TestClamperStamp(t *testing.T) {
	wall := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixNano()
	gpsEpoch := time.Date(1980, 1, 6, 0, 0, 0, 0, time.UTC).UnixNano()
	rolled := wall - int64(WeekRollover)
	for _, tc := range []struct {
		name   string
		ts     int64
		hasTs  bool
		event  int64
		reason ClampReason
	}{
		{"on time", wall - int64(300*time.Millisecond), true, wall - int64(300*time.Millisecond), ClampNone},
		{"missing", 0, false, wall, ClampMissing},
		{"epoch zero", 0, true, wall, ClampBeforeFloor},
		{"seconds after epoch zero", int64(90 * time.Second), true, wall, ClampBeforeFloor},
		{"the 1980 GPS epoch", gpsEpoch, true, wall, ClampBeforeFloor},
		{"a nanosecond before the floor", floor - 1, true, wall, ClampBeforeFloor},
		{"at the floor: a backlog", floor, true, floor, ClampNone},
		{"a day old: a backlog", wall - int64(24*time.Hour), true, wall - int64(24*time.Hour), ClampNone},
		{"ahead by the largest offset", wall + int64(10*time.Minute), true, wall + int64(10*time.Minute), ClampNone},
		{"ahead by more", wall + int64(10*time.Minute) + 1, true, wall, ClampFuture},
		{"a year ahead", wall + int64(365*24*time.Hour), true, wall, ClampFuture},
		{"week rollover", rolled, true, wall, ClampWeekRollover},
		{"week rollover, 2 s behind", rolled - int64(2*time.Second), true, wall - int64(2*time.Second), ClampWeekRollover},
		{"week rollover, 2 s ahead", rolled + int64(2*time.Second), true, wall + int64(2*time.Second), ClampWeekRollover},
		// Outside the repair window, 2007 is before the floor.
		{"1024 weeks and 3 s behind", rolled - int64(3*time.Second), true, wall, ClampBeforeFloor},
	} {
		event, reason := clamper.Stamp(tc.ts, tc.hasTs, wall)
		if event != tc.event || reason != tc.reason {
			t.Errorf("%s: event %v, %q; want %v, %q", tc.name,
				time.Duration(event-wall), reason, time.Duration(tc.event-wall), tc.reason)
		}
	}
}

// Whatever the stamp: an unaltered one is the stamp; a replaced one is
// the server's clock; a repaired one is within the skew tolerance of it;
// and no event is further ahead of the server than the largest offset.
func TestPropertyClamperEventIsPlausible(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		wall := rapid.Int64Range(floor+int64(time.Hour), floor+int64(100*365*24*time.Hour)).Draw(t, "wall")
		var ts int64
		switch rapid.IntRange(0, 3).Draw(t, "kind") {
		case 0: // anywhere
			ts = rapid.Int64().Draw(t, "ts")
		case 1: // around the server's clock
			ts = wall + rapid.Int64Range(-int64(time.Hour), int64(time.Hour)).Draw(t, "ts_off")
		case 2: // around a rolled-over clock
			ts = wall - int64(WeekRollover) + rapid.Int64Range(-int64(5*time.Second), int64(5*time.Second)).Draw(t, "ts_off")
		case 3: // a counting clock
			ts = rapid.Int64Range(0, int64(365*24*time.Hour)).Draw(t, "ts_count")
		}
		hasTs := rapid.Bool().Draw(t, "has_ts")
		event, reason := clamper.Stamp(ts, hasTs, wall)
		switch reason {
		case ClampNone:
			if event != ts || !hasTs || ts < floor {
				t.Fatalf("unaltered: event %d, stamp %d (has %v)", event, ts, hasTs)
			}
		case ClampMissing, ClampBeforeFloor, ClampFuture:
			if event != wall {
				t.Fatalf("%s: event %d, want the server's clock %d", reason, event, wall)
			}
		case ClampWeekRollover:
			if d := event - wall; d < -int64(clamper.Skew) || d > int64(clamper.Skew) || event-ts != int64(WeekRollover) {
				t.Fatalf("repaired to %v from the server's clock, by %v", time.Duration(d), time.Duration(event-ts))
			}
		default:
			t.Fatalf("reason %v", reason)
		}
		if event-wall > int64(clamper.MaxAhead) {
			t.Fatalf("event %v ahead of the server", time.Duration(event-wall))
		}
		if !hasTs && reason != ClampMissing {
			t.Fatalf("no stamp: %q", reason)
		}
	})
}
