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
	// GPSNoise switches on the real world's fixes (noise.go, park.go):
	// per-device receiver quality, drifting and white error, optimistic
	// accuracies, outliers and devices parked at fence edges. Off: every
	// fix is exactly where the device was (ordering effects alone).
	GPSNoise bool
	// A device's true 68 % error radius is uniform in [AccMin, AccMax]
	// metres, or in [PoorAccMin, PoorAccMax] for a PoorShare of devices.
	AccMin, AccMax         float64
	PoorShare              float64
	PoorAccMin, PoorAccMax float64
	// GPSNoiseCorr is the correlation time of the error's drifting part
	// (first-order autoregressive); GPSNoiseWhite the share of the error's
	// variance that is white (independent per fix). Zero correlation: all
	// white.
	GPSNoiseCorr  time.Duration
	GPSNoiseWhite float64
	// An OptimisticShare of devices report acc as their true 68 % radius
	// divided by OptimisticFactor; the rest report it honestly.
	OptimisticShare  float64
	OptimisticFactor float64
	// An OutlierShare of fixes land [OutlierMin, OutlierMax] metres off
	// in a random direction, reported with the device's ordinary acc.
	OutlierShare           float64
	OutlierMin, OutlierMax float64
	// A ParkShare of devices, at a time in the run's first third, drive to
	// a spot within ParkNear metres of the nearest fence edge (inside or
	// outside, uniformly) and stand still there for [ParkMin, ParkMax].
	ParkShare        float64
	ParkNear         float64
	ParkMin, ParkMax time.Duration
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

		GPSNoise:         true,
		AccMin:           3,
		AccMax:           10,
		PoorShare:        0.1,
		PoorAccMin:       20,
		PoorAccMax:       50,
		GPSNoiseCorr:     30 * time.Second,
		GPSNoiseWhite:    0.2,
		OptimisticShare:  0.1,
		OptimisticFactor: 2,
		OutlierShare:     0.001,
		OutlierMin:       100,
		OutlierMax:       500,
		ParkShare:        0.05,
		ParkNear:         30,
		ParkMin:          2 * time.Minute,
		ParkMax:          10 * time.Minute,
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
	case !c.GPSNoise:
		return nil
	case c.AccMin <= 0 || c.AccMax < c.AccMin || c.PoorAccMin <= 0 || c.PoorAccMax < c.PoorAccMin:
		return fmt.Errorf("fleet: accuracy ranges [%v, %v] and [%v, %v] m must be positive ranges", c.AccMin, c.AccMax, c.PoorAccMin, c.PoorAccMax)
	case c.OutlierMin < 0 || c.OutlierMax < c.OutlierMin || c.ParkNear < 0 || c.ParkMin <= 0 || c.ParkMax < c.ParkMin:
		return fmt.Errorf("fleet: outlier [%v, %v] m, park distance %v m and park time [%v, %v] must be positive ranges", c.OutlierMin, c.OutlierMax, c.ParkNear, c.ParkMin, c.ParkMax)
	case c.OptimisticFactor < 1:
		return fmt.Errorf("fleet: optimistic factor %v is below 1", c.OptimisticFactor)
	}
	for _, x := range []float64{c.PoorShare, c.GPSNoiseWhite, c.OptimisticShare, c.OutlierShare, c.ParkShare} {
		if x < 0 || x > 1 {
			return fmt.Errorf("fleet: share %v is outside [0, 1]", x)
		}
	}
	return nil
}
