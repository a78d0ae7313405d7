package engine

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/hold"
)

// Config holds the engine's settings. Start from DefaultConfig: a zero
// field means zero, not "default".
type Config struct {
	// Hold is the allowed lateness: how long a ping waits in its device's
	// reorder buffer at most, and how far its device's watermark trails its
	// high-water mark. Zero disables the buffer: pings are evaluated in
	// arrival order, the baseline that invents transitions. AdaptiveHold
	// sets each device's hold from its own pings instead
	// (package hold): the lateness they arrive with, within [HoldMin,
	// HoldMax], HoldMax while the device is new or its clock is not
	// stable; HoldMax then also judges how late a ping may be and still
	// be fresh.
	Hold             time.Duration
	HoldMin, HoldMax time.Duration
	// MaxAccuracy is the largest fix accuracy (metres) that widens fence
	// edges: a ping whose accuracy circle straddles an edge changes
	// nothing there. A fix worse than it is taken at its position alone;
	// zero ignores accuracy. A fence's max_accuracy overrides it.
	MaxAccuracy float64
	// AccuracyMargin is how many accuracies a fix must clear a fence's
	// edge by to change the device's state in that fence: at 1 a fix
	// within its accuracy of the edge changes nothing, wider margins
	// trade missed shallow visits for fewer flips on noise.
	AccuracyMargin float64
	// MaxSpeed is the speed gate's (package gate), m/s: a fix farther from
	// its device's last accepted fix than this speed, plus both fixes'
	// accuracy, could take it is set aside, unless the next agrees with
	// it. Zero, DefaultConfig's for now, switches the gate off: the
	// end-to-end suites' devices jump between fences in a second.
	MaxSpeed float64
	// Skew is how far ahead of its device's learned clock a stamp may be
	// (and the window of the week-rollover repair).
	Skew time.Duration
	// MaxClockOffset is how far from the server's clock a device's clock
	// may be: a new device is trusted within it, and a stamp further
	// ahead of the server is clamped.
	MaxClockOffset time.Duration
	// History is how far back each device's committed pings are kept for
	// reconciling late pings into; zero sends late pings to the late
	// output as they come.
	History time.Duration
	// HistoryPoints caps the committed pings kept per device.
	HistoryPoints int
	// HistoryWait is how long a device's late pings are gathered after
	// the last one came before they are reconciled: a backlog is placed
	// whole, and a backward step is told from delayed pings.
	HistoryWait time.Duration
	// MinValidTime is the plausibility floor for stamps.
	MinValidTime time.Time
	// Sweep is the housekeeping period: idle eviction and the clock and
	// hold metrics (a silent device's DWELL timer is a deadline of its own).
	Sweep time.Duration
	// IdleTimeout is how long a device may stay silent before its buffer
	// memory is reclaimed (its fence state is kept).
	IdleTimeout time.Duration
	// BufferCap caps each device's reorder buffer.
	BufferCap int
	// Queue is each shard's ingest queue capacity.
	Queue int
	// Shards is the number of owner goroutines.
	Shards int
	// Dwell is the dwell time of a fence without its own; zero disables
	// DWELL for such fences.
	Dwell time.Duration
}

// Defaults of Config.
const (
	DefaultHold = 500 * time.Millisecond
	// DefaultHoldMin and DefaultHoldMax bound the adaptive hold: a
	// wider bound bought no accuracy and cost latency, a lower floor lost
	// more late pings (docs/simulation.md has the runs).
	DefaultHoldMin = 100 * time.Millisecond
	DefaultHoldMax = 500 * time.Millisecond
	// DefaultMaxAccuracy counts GPS fixes (a few to tens of metres) and
	// leaves out cell-tower and Wi-Fi fixes (hundreds of metres), which
	// would otherwise hold a fence's state for as long as they come.
	DefaultMaxAccuracy = 100.0
	// DefaultAccuracyMargin is 2 standard deviations of the error across
	// an edge when acc is, as phones and OwnTracks report it, the 68 %
	// radius of a two-dimensional normal error (1.515 σ per axis). A
	// change needs two fixes in a row clear of it (fence.Hold), so the
	// margin can be narrower than a single fix would need, and see
	// shallower visits (docs/fences.md).
	DefaultAccuracyMargin = 1.3
	DefaultSkew           = 2 * time.Second
	// DefaultMaxSpeed is the speed gate's default (docs/fences.md): a road
	// vehicle's 250 km/h, with room. Aircraft need more.
	DefaultMaxSpeed = 70.0
	// DefaultMaxClockOffset is minutes: trackers that keep time badly are
	// seconds to a minute off; a stamp hours or years ahead is a glitch.
	DefaultMaxClockOffset = 10 * time.Minute
	// DefaultHistory covers the longest outage the fleet model reconciles
	// (10 minutes) with room.
	DefaultHistory       = 15 * time.Minute
	DefaultHistoryPoints = 16
	DefaultHistoryWait   = 3 * time.Second
	DefaultSweep         = 250 * time.Millisecond
	// DefaultIdleTimeout is the default history: an evicted device's
	// history goes with it.
	DefaultIdleTimeout = 15 * time.Minute
	DefaultBufferCap   = 64
	// DefaultQueue holds the pings brought to a shard while another
	// goroutine owns it. That is brief, unless the owner is preempted or
	// waits on a full publisher queue: then every runnable client goroutine
	// may bring its buffered pings (up to connections × pings in flight,
	// e.g. 1,000 × 8) before the owner runs again.
	DefaultQueue = 32768
	DefaultDwell = 5 * time.Minute
)

// MaxHold is the longest hold a device may have: the buffer exists to
// absorb network reordering, and idle eviction assumes it is short.
const MaxHold = 30 * time.Minute

// DefaultMinValidTime is the default plausibility floor, 2015-01-01 UTC:
// after the epoch-zero and 1980 GPS-epoch stamps of cold-booted trackers.
var DefaultMinValidTime = time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC)

// DefaultConfig returns the defaults, with one shard per GOMAXPROCS.
func DefaultConfig() Config {
	return Config{
		Hold:           DefaultHold,
		HoldMin:        DefaultHoldMin,
		HoldMax:        DefaultHoldMax,
		MaxAccuracy:    DefaultMaxAccuracy,
		AccuracyMargin: DefaultAccuracyMargin,
		Skew:           DefaultSkew,
		MaxClockOffset: DefaultMaxClockOffset,
		History:        DefaultHistory,
		HistoryPoints:  DefaultHistoryPoints,
		HistoryWait:    DefaultHistoryWait,
		MinValidTime:   DefaultMinValidTime,
		Sweep:          DefaultSweep,
		IdleTimeout:    DefaultIdleTimeout,
		BufferCap:      DefaultBufferCap,
		Queue:          DefaultQueue,
		Shards:         runtime.GOMAXPROCS(0),
		Dwell:          DefaultDwell,
		MaxSpeed:       DefaultMaxSpeed,
	}
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("invalid engine configuration")

// Validate reports the first setting the engine cannot run with.
func (c Config) Validate() error {
	switch {
	case c.Hold < 0 && c.Hold != AdaptiveHold || c.Hold > MaxHold:
		return fmt.Errorf("%w: hold %v is outside [0, %v]", ErrConfig, c.Hold, MaxHold)
	case c.Adaptive() && (c.HoldMin <= 0 || c.HoldMax < c.HoldMin || c.HoldMax > hold.Limit):
		return fmt.Errorf("%w: adaptive hold bounds [%v, %v] must satisfy 0 < min <= max <= %v", ErrConfig, c.HoldMin, c.HoldMax, hold.Limit)
	case !(c.MaxAccuracy >= 0) || math.IsInf(c.MaxAccuracy, 0):
		return fmt.Errorf("%w: max accuracy %v must be a number of metres >= 0", ErrConfig, c.MaxAccuracy)
	case !(c.AccuracyMargin >= 0) || math.IsInf(c.AccuracyMargin, 0):
		return fmt.Errorf("%w: accuracy margin %v must be a number >= 0", ErrConfig, c.AccuracyMargin)
	case !(c.MaxSpeed >= 0) || math.IsInf(c.MaxSpeed, 0):
		return fmt.Errorf("%w: max speed %v must be a number of m/s >= 0", ErrConfig, c.MaxSpeed)
	case c.Skew < 0 || c.MaxClockOffset < c.Skew:
		return fmt.Errorf("%w: skew tolerance %v must be in [0, max clock offset %v]", ErrConfig, c.Skew, c.MaxClockOffset)
	case c.History < 0 || c.HistoryWait < 0 || c.History > 0 && (c.HistoryPoints < 2 || c.HistoryWait <= 0):
		return fmt.Errorf("%w: history %v needs at least 2 points (%d) and a positive wait (%v)", ErrConfig, c.History, c.HistoryPoints, c.HistoryWait)
	case c.Dwell < 0:
		return fmt.Errorf("%w: dwell %v is negative", ErrConfig, c.Dwell)
	case c.Sweep <= 0 || c.IdleTimeout <= 0:
		return fmt.Errorf("%w: sweep %v and idle timeout %v must be positive", ErrConfig, c.Sweep, c.IdleTimeout)
	case c.BufferCap < 1 || c.Queue < 1 || c.Shards < 1:
		return fmt.Errorf("%w: buffer cap %d, queue %d and shards %d must be at least 1", ErrConfig, c.BufferCap, c.Queue, c.Shards)
	}
	return nil
}

// AdaptiveHold is Config.Hold's value for the adaptive per-device hold.
const AdaptiveHold time.Duration = math.MinInt64

// Adaptive reports whether each device's hold adapts to its pings.
func (c Config) Adaptive() bool { return c.Hold == AdaptiveHold }

// Policy returns the adaptive hold's bounds.
func (c Config) Policy() hold.Policy {
	return hold.Policy{Min: c.HoldMin, Max: c.HoldMax, Settle: settlePings}
}

// BehindTol is how far behind its clock model a stamp of a device with
// hold (ns) may be and still be fresh rather than a step back's.
func (c Config) BehindTol(hold int64) int64 {
	if c.Adaptive() {
		// How late a ping may be and still be fresh is the clock model's
		// judgement, not the buffer's: a hold that narrows must not make
		// ordinary delays look like a step back (docs/engine.md).
		return max(clock.MinBehind, int64(c.HoldMax))
	}
	return max(clock.MinBehind, hold)
}

// settlePings is how many on-time pings a new or stepped device sends at
// the widest adaptive hold: twice what its clock model learns from.
const settlePings = 2 * clock.LearnPings

// Clamper returns the stamp plausibility check this configuration asks for.
func (c Config) Clamper() clock.Clamper {
	floor := int64(math.MinInt64) // UnixNano is undefined before 1678
	if c.MinValidTime.Year() >= 1678 {
		floor = c.MinValidTime.UnixNano()
	}
	return clock.Clamper{Skew: c.Skew, MaxAhead: c.MaxClockOffset, Floor: floor}
}
