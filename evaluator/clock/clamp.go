package clock

import (
	"time"
)

// ClampReason says why a ping's event time is not the device's own stamp.
type ClampReason uint8

// Clamp reasons. Everything but ClampNone and ClampWeekRollover replaces the
// stamp with the device's clock as its model has it at ingest (the ingest
// wall time for a device without a model yet).
const (
	ClampNone         ClampReason = iota
	ClampMissing                  // the payload had no stamp
	ClampBeforeFloor              // before the plausibility floor (epoch zero after a cold boot, the 1980 GPS epoch)
	ClampFuture                   // more than the largest clock offset ahead of the server's wall clock
	ClampWeekRollover             // 1024 weeks behind (GPS week-number rollover): repaired, not replaced
	ClampAhead                    // more than the skew tolerance ahead of its device's own clock, as learned
	NumClampReasons               // how many reasons there are, for arrays indexed by them
)

var clampNames = [NumClampReasons]string{"", "missing", "before_floor", "future", "week_rollover", "ahead"}

// String returns the reason's label ("" for ClampNone).
func (r ClampReason) String() string {
	if r < NumClampReasons {
		return clampNames[r]
	}
	return "unknown"
}

// ParseClampReason is the inverse of ClampReason.String: "" is ClampNone.
func ParseClampReason(s string) (ClampReason, bool) {
	for i, n := range clampNames {
		if n == s {
			return ClampReason(i), true
		}
	}
	return 0, false
}

// Clamped reports whether the stamp was altered.
func (r ClampReason) Clamped() bool { return r != ClampNone }

// ClampReasons lists every reason but ClampNone, for pre-creating metrics.
func ClampReasons() []ClampReason {
	return []ClampReason{ClampMissing, ClampBeforeFloor, ClampFuture, ClampWeekRollover, ClampAhead}
}

// WeekRollover is 1024 GPS weeks: how far behind a receiver with a
// week-number rollover bug stamps its fixes.
const WeekRollover = 1024 * 7 * 24 * time.Hour

// Clamper makes the checks of a stamp that need no device history: the
// engine then judges it against its device's clock model.
type Clamper struct {
	// Skew is the window around a week-rolled-over "now" that is repaired.
	Skew time.Duration
	// MaxAhead is how far ahead of the server's wall clock a stamp may be:
	// the largest clock offset a device may have.
	MaxAhead time.Duration
	// Floor is the earliest plausible stamp, in Unix nanoseconds.
	Floor int64
}

// Stamp returns the event time for a device stamp ts (Unix ns, ignored
// unless hasTs) received at ingest wall time wall (Unix ns), and the reason
// it was altered. An old stamp is not clamped: store-and-forward backlogs are
// legitimate, and the device's history decides their fate.
func (c Clamper) Stamp(ts int64, hasTs bool, wall int64) (int64, ClampReason) {
	skew := int64(c.Skew)
	rolled := wall - int64(WeekRollover) // where a rolled-over receiver stamps "now"
	switch {
	case !hasTs:
		return wall, ClampMissing
	case ts >= rolled-skew && ts <= rolled+skew:
		// Repair first: a rolled-over receiver is otherwise accurate.
		return ts + int64(WeekRollover), ClampWeekRollover
	case ts < c.Floor:
		return wall, ClampBeforeFloor
	case ts > wall && ts-wall > int64(c.MaxAhead):
		return wall, ClampFuture
	}
	return ts, ClampNone
}
