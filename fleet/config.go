// Package fleet is a deterministic fleet simulator: vehicles moving over
// an area of fences, with the clock and network faults that make trackers
// hard, and the ground truth of when each really entered or left a fence.
// It drives the engine through shadow.Runner in virtual time.
package fleet

import (
	"fmt"
	"time"
)

// Config is the fleet model and its faults. Every field is a flag of
// `edgefence simulate`; a zero rate or duration switches a fault off.
type Config struct {
	Seed     uint64
	Devices  int
	Duration time.Duration // simulated time
	MinHz    float64       // each device reports at a rate uniform in [MinHz, MaxHz]
	MaxHz    float64

	// Area: a square of AreaKm × AreaKm centred on CenterLat, CenterLon.
	CenterLat, CenterLon float64
	AreaKm               float64
	MinSpeed, MaxSpeed   float64 // m/s, uniform per device (road speeds)

	// Faults.
	ClockOffset  time.Duration // per-device constant offset, uniform in ±ClockOffset
	DelayMedian  time.Duration // transport delay: lognormal with this median…
	DelayP99     time.Duration // …and this 99th percentile; median 0 = no delay
	HandoverPerH float64       // clock steps per device-hour (cellular handover)
	StepMin      time.Duration // a step is ±[StepMin, StepMax]
	StepMax      time.Duration
	ColdBootPerH float64       // reboots per device-hour: stamps from epoch 0 or 1980…
	AttachMin    time.Duration // …until the GPS attaches, after [AttachMin, AttachMax]
	AttachMax    time.Duration
	OutagePerH   float64       // coverage losses per device-hour…
	OutageMin    time.Duration // …lasting [OutageMin, OutageMax]; the backlog is then
	OutageMax    time.Duration // flushed in a burst
	NewestFirst  float64       // share of backlogs flushed newest-first (the rest oldest-first)
	GPSNoise     bool          // report positions with 3–30 m of noise (off: ordering effects alone)
	// GPSNoiseCorr, with GPSNoise, makes a device's position error drift
	// (a first-order autoregressive error with this correlation time), as
	// a real receiver's does, and its reported accuracy the 68 % radius of
	// that error, as phones report it. Zero: the error is independent per
	// fix and its per-axis deviation is the reported accuracy.
	GPSNoiseCorr time.Duration
	// An emitted transition matches a true one of its type when its
	// causing ping was fixed at most MatchEarly before, or MatchLate after,
	// the true change.
	MatchEarly time.Duration
	MatchLate  time.Duration
}

// DefaultConfig is the model docs/simulation.md's figures come from.
func DefaultConfig() Config {
	return Config{
		Seed:         1,
		Devices:      40_000,
		Duration:     10 * time.Minute,
		MinHz:        1,
		MaxHz:        5,
		CenterLat:    52.515,
		CenterLon:    13.39,
		AreaKm:       10,
		MinSpeed:     5,
		MaxSpeed:     20,
		ClockOffset:  3 * time.Second,
		DelayMedian:  100 * time.Millisecond,
		DelayP99:     1500 * time.Millisecond,
		HandoverPerH: 6,
		StepMin:      500 * time.Millisecond,
		StepMax:      3 * time.Second,
		ColdBootPerH: 0.5,
		AttachMin:    5 * time.Second,
		AttachMax:    60 * time.Second,
		OutagePerH:   1,
		OutageMin:    30 * time.Second,
		OutageMax:    10 * time.Minute,
		NewestFirst:  0.5,
		MatchEarly:   5 * time.Second,
		MatchLate:    15 * time.Minute,
	}
}

// Validate reports the first setting the model cannot run with.
func (c *Config) Validate() error {
	switch {
	case c.Devices < 1 || c.Duration <= 0:
		return fmt.Errorf("fleet: need at least one device and a positive duration")
	case c.MinHz <= 0 || c.MaxHz < c.MinHz:
		return fmt.Errorf("fleet: report rate [%v, %v] Hz is not a positive range", c.MinHz, c.MaxHz)
	case c.AreaKm <= 0 || c.MinSpeed < 0 || c.MaxSpeed < c.MinSpeed:
		return fmt.Errorf("fleet: area %v km and speeds [%v, %v] m/s must be positive ranges", c.AreaKm, c.MinSpeed, c.MaxSpeed)
	case c.DelayMedian > 0 && c.DelayP99 < c.DelayMedian:
		return fmt.Errorf("fleet: delay p99 %v is below the median %v", c.DelayP99, c.DelayMedian)
	case c.StepMax < c.StepMin || c.AttachMax < c.AttachMin || c.OutageMax < c.OutageMin:
		return fmt.Errorf("fleet: a fault's max is below its min")
	case c.NewestFirst < 0 || c.NewestFirst > 1:
		return fmt.Errorf("fleet: newest-first share %v is outside [0, 1]", c.NewestFirst)
	}
	return nil
}
