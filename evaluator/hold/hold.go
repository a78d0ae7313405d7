// Package hold is the adaptive reorder hold: per device, a compact
// decaying estimate of a high quantile of how far behind its own
// high-water mark the device's pings arrive, from which its hold is set
// within bounds. docs/engine.md describes the policy and the
// measurements behind its constants.
package hold

import "time"

// Unit is the resolution of an estimate: 250 µs, so that a uint16 spans
// Limit and the decay still moves a small estimate.
const Unit = 250 * time.Microsecond

// Limit is the largest hold an estimate can express (16.38 s).
const Limit = time.Duration(1<<16-1) * Unit

// decayShift sets how fast a steady device narrows: each on-time ping
// takes 1/2^decayShift of the estimate off, a half-life of about five
// pings. The estimate is an upper envelope of the lateness seen: it
// rests where the mean excess of the pings above it matches that decay,
// a high quantile of the device's lateness.
const decayShift = 3

// Estimate is one device's lateness estimate: three bytes with no
// alignment, so that it fits the last spare bytes of the device record.
// The zero value is a device never seen.
type Estimate struct {
	q      [2]uint8 // lateness quantile, in Units, little-endian
	unsure uint8    // on-time pings still to come before the estimate alone decides
}

func (e *Estimate) quantile() uint16     { return uint16(e.q[0]) | uint16(e.q[1])<<8 }
func (e *Estimate) setQuantile(u uint16) { e.q = [2]uint8{uint8(u), uint8(u >> 8)} }

// Policy bounds the holds an Estimate gives: at least Min, at most Max,
// and Max while the device is unsure.
type Policy struct {
	Min, Max time.Duration
	// Settle is how many on-time pings a device sends, after it started
	// or its clock stepped, before its estimate alone decides.
	Settle uint8
}

// Widen marks the estimate unsure: the device has just started or its
// clock stepped, so what its pings' lateness was says little of what it
// will be. Its hold is Max until Settle on-time pings have come.
func (e *Estimate) Widen(p *Policy) { e.unsure = max(p.Settle, 1) }

// Observe records a ping that arrived late behind its device's high-water
// mark (0 for one at or after it). A late ping widens the estimate to its
// lateness (at most p.Max) at once; an on-time one narrows it by a
// fraction.
func (e *Estimate) Observe(late time.Duration, p *Policy) {
	if late > 0 {
		u := (min(late, p.Max, Limit) + Unit - 1) / Unit
		e.setQuantile(max(e.quantile(), uint16(u)))
		return
	}
	q := e.quantile()
	e.setQuantile(q - max(q>>decayShift, min(q, 1)))
	if e.unsure > 0 {
		e.unsure--
	}
}

// Bits returns the estimate's whole state, for a checkpoint.
func (e Estimate) Bits() uint32 { return uint32(e.q[0]) | uint32(e.q[1])<<8 | uint32(e.unsure)<<16 }

// FromBits returns the estimate whose Bits are b.
func FromBits(b uint32) Estimate {
	return Estimate{q: [2]uint8{uint8(b), uint8(b >> 8)}, unsure: uint8(b >> 16)}
}

// Quantile returns the lateness estimate.
func (e *Estimate) Quantile() time.Duration { return time.Duration(e.quantile()) * Unit }

// Hold returns the hold p gives a device with estimate e.
func (e *Estimate) Hold(p *Policy) time.Duration {
	if e.unsure > 0 {
		return p.Max
	}
	return min(max(e.Quantile(), p.Min), p.Max)
}
