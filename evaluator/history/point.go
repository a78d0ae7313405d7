// Package history is a device's committed pings, kept so that late pings
// can be placed among them, and the batch of late pings waiting to be:
// fixed-point points, the slice algorithms that trim and search them,
// mend a backlog's clock steps and merge late pings in, and the fence
// membership changes a run of late pings implies. It knows neither the
// device's clock model nor the state machine: the engine passes what
// they decide.
package history

import (
	"math"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/reorder"
)

// Point is a committed ping, kept so that a late ping can be placed
// among the pings around it: its fence membership is evaluated again
// from the position when a late ping needs it. The position is in
// fixed point (see Fixed); the engine rounds every ping's position to
// it on ingest (Quantize), so a point evaluated again gives the live
// answer.
type Point struct {
	Event    int64   // on the device's timeline, Unix ns
	Wall     int64   // ingest wall clock, Unix ns
	Lat, Lon int32   // degrees × Scale
	Acc      uint16  // the fix's accuracy, decimetres (reorder.Held.Acc)
	Settled  Settled // how the live path settled its membership
	Gate     Gate    // what the speed gate made of it, in what was padding
	// Held are the fences (fence.Fence.Rank + 1; 0 is none) whose state
	// the point's settling held against its position, when Settled says
	// held: none recorded means more than two, or not known. They fit in
	// what was padding.
	Held [2]uint16
}

// Gate is what the speed gate (package gate) made of a point. A point
// set aside says nothing of where the device was: membership replays
// skip it.
type Gate uint8

const (
	// GateUntimed is a point whose event time is not the device's own (a
	// clamped stamp): the gate does not judge it on its time.
	GateUntimed Gate = 1 << iota
	// GateAside is a point the gate set aside: an impossible jump.
	GateAside
	// GateLate is a late ping's point not yet judged by the speed gate
	// (gate.Mark) and the standing rule (Stand).
	GateLate
	// GateStill is a point taken while the device stood still (package
	// still): it changes no fence (fence.Hold). A late point between two
	// such points is one too (Merge), and so is one where the fixes up to
	// it show the device standing (Stand).
	GateStill
	// GateHeld is a point whose settling kept a fence against its fix for
	// more than its margin (fence.Hold): its record is trusted as it is.
	GateHeld
)

// Still reports whether pt was taken while the device stood still.
func (pt *Point) Still() bool { return pt.Gate&GateStill != 0 }

// Aside reports whether the speed gate set pt aside.
func (pt *Point) Aside() bool { return pt.Gate&GateAside != 0 }

// Settled is how the live path settled a committed point's fence
// membership under accuracy hysteresis (fence.Settle): a late ping placed
// after it starts from that state, which the points before it decided
// when an edge was within the fix's margin.
type Settled uint8

const (
	// SettledUnknown is a late ping's point, or one kept before points
	// said: replayed from the points before it.
	SettledUnknown Settled = iota
	// SettledAtPosition is a point whose membership was the fences
	// containing it: a replay may start there.
	SettledAtPosition
	// SettledHeld is a point whose membership an edge within its margin
	// kept against its position: in the fences Held.
	SettledHeld
	// SettledKept is a late point clear of a fence's edge whose change
	// there a transition published later stands for, kept for another
	// fence's change: its Held fences are the published state, trusted
	// without an edge within the margin.
	SettledKept
)

// Record notes how pt's membership eff was settled from hits, the fences
// containing it (both sorted by ID).
func (pt *Point) Record(hits, eff []*fence.Fence) {
	pt.Settled, pt.Held = SettledAtPosition, [2]uint16{}
	for _, f := range hits {
		if fence.Find(eff, f.ID) == nil {
			pt.hold(f)
		}
	}
	for _, f := range eff {
		if fence.Find(hits, f.ID) == nil {
			pt.hold(f)
		}
	}
}

// hold adds f to pt's held fences; beyond two, none is recorded.
func (pt *Point) hold(f *fence.Fence) {
	full := pt.Settled != SettledAtPosition && pt.Held == [2]uint16{}
	pt.Settled = max(pt.Settled, SettledHeld)
	r := f.Rank() + 1
	switch {
	case full || r > math.MaxUint16:
		pt.Held = [2]uint16{}
	case pt.Held[0] == 0 || pt.Held[0] == uint16(r):
		pt.Held[0] = uint16(r)
	case pt.Held[1] == 0 || pt.Held[1] == uint16(r):
		pt.Held[1] = uint16(r)
	default:
		pt.Held = [2]uint16{}
	}
}

// setHeld records whether pt's state in f is held against its position,
// keeping the other fences' as they were.
func (pt *Point) setHeld(f *fence.Fence, held bool) {
	if held {
		pt.hold(f)
		return
	}
	if pt.Settled < SettledHeld || pt.Held == [2]uint16{} {
		return // at its position already, or not known
	}
	r := uint16(f.Rank() + 1)
	switch r {
	case pt.Held[0]:
		pt.Held = [2]uint16{pt.Held[1], 0}
	case pt.Held[1]:
		pt.Held[1] = 0
	}
	if pt.Held == [2]uint16{} {
		pt.Settled = SettledAtPosition
	}
}

// Scale is how many steps a degree of a kept position has: 1e-7° is
// 1.1 cm or less, far below a GPS fix's error, and ±180° fits an int32.
const Scale = 1e7

// Fixed returns degrees in the fixed point of a Point.
func Fixed(deg float64) int32 { return int32(math.Round(deg * Scale)) }

// Degrees returns a fixed-point position in degrees: the nearest float64
// to it, so a position rounded with Quantize comes back identical.
func Degrees(f int32) float64 { return float64(f) / Scale }

// Quantize rounds a position in degrees to what a Point keeps.
func Quantize(deg float64) float64 { return Degrees(Fixed(deg)) }

// PointOf keeps what the history needs of a ping at event, taken at wall,
// of accuracy acc (decimetres, reorder.AccOf).
func PointOf(event, wall int64, lat, lon float64, acc uint16) Point {
	return Point{Event: event, Wall: wall, Lat: Fixed(lat), Lon: Fixed(lon), Acc: acc}
}

// HeldPoint is PointOf a held ping: a late one, for the gate to judge.
func HeldPoint(h *reorder.Held) Point {
	pt := PointOf(h.Event, h.Wall, h.Lat, h.Lon, h.Acc)
	pt.Gate = GateLate
	if !keyedByStamp(h.Clamp) {
		pt.Gate |= GateUntimed
	}
	return pt
}
