package fleet

import (
	"math"
	"math/rand/v2"
)

// r68 is the 68 % radius of a two-dimensional normal error in units of
// its per-axis deviation, sqrt(-2 ln 0.32): what a tracker reports as acc.
const r68 = 1.5096

// noiseStream keeps the receiver's draws off the device's main random
// stream, so that switching noise on changes no clock or network fault.
const noiseStream = 0x6e6f697365 // "noise"

// receiver is one device's GPS receiver: how large its error is, how it
// drifts, and what it reports.
type receiver struct {
	rng     *rand.Rand
	sigma   float64 // per-axis deviation of the true error, metres (outliers aside)
	acc     float64 // what it reports: the 68 % radius, or less when optimistic
	honest  bool    // acc is the 68 % radius
	drift   float64 // per-axis deviation of the drifting part
	white   float64 // …and of the white part
	corr    float64 // the drift's correlation time, ns (0: none)
	ex, ey  float64 // the drift now, metres east and north
	outlier [3]float64
}

// newReceiver draws device i's receiver from its own stream.
func (c *Config) newReceiver(i int) *receiver {
	rng := rand.New(rand.NewPCG(c.Seed^noiseStream, uint64(i)))
	lo, hi := c.AccMin, c.AccMax
	if rng.Float64() < c.PoorShare {
		lo, hi = c.PoorAccMin, c.PoorAccMax
	}
	true68 := lo + rng.Float64()*(hi-lo)
	r := &receiver{rng: rng, sigma: true68 / r68, acc: true68, honest: true}
	if rng.Float64() < c.OptimisticShare {
		r.acc, r.honest = true68/c.OptimisticFactor, false
	}
	white := c.GPSNoiseWhite
	if c.GPSNoiseCorr <= 0 {
		white = 1
	}
	r.white = r.sigma * math.Sqrt(white)
	r.drift = r.sigma * math.Sqrt(1-white)
	r.corr = float64(c.GPSNoiseCorr)
	r.ex, r.ey = r.drift*rng.NormFloat64(), r.drift*rng.NormFloat64() // already stationary
	r.outlier = [3]float64{c.OutlierShare, c.OutlierMin, c.OutlierMax}
	return r
}

// fix returns the next fix's error, metres east and north, period ns
// after the last, and whether it is an outlier.
func (r *receiver) fix(period int64) (dx, dy float64, outlier bool) {
	if r.drift > 0 {
		rho := math.Exp(-float64(period) / r.corr)
		sd := r.drift * math.Sqrt(1-rho*rho)
		r.ex, r.ey = rho*r.ex+sd*r.rng.NormFloat64(), rho*r.ey+sd*r.rng.NormFloat64()
	}
	dx, dy = r.ex+r.white*r.rng.NormFloat64(), r.ey+r.white*r.rng.NormFloat64()
	if r.rng.Float64() < r.outlier[0] {
		d := r.outlier[1] + r.rng.Float64()*(r.outlier[2]-r.outlier[1])
		a := r.rng.Float64() * 2 * math.Pi
		dx, dy, outlier = dx+d*math.Cos(a), dy+d*math.Sin(a), true
	}
	return dx, dy, outlier
}
