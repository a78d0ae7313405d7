package fleet

import (
	"math"
	"math/rand/v2"

	"github.com/edgefence/edgefence/evaluator/fence"
)

// parking is a device's stop at a fence edge: the case operators complain
// about most, a truck at a loading bay on the fence line whose fixes
// jitter across it. The device heads for the spot at start, stands still
// there for dur once it arrives, and is parked over [from, to].
type parking struct {
	start    int64   // when it heads for the spot (ns of true time)
	dur      int64   // how long it stands
	x, y     float64 // the spot, metres east and north of the area's centre
	heading  bool    // driving to the spot
	from, to int64   // when it stood there; from < 0: not (yet)
}

// newParking draws whether device i parks and when, from the receiver's
// stream; nil when it does not.
func (c *Config) newParking(rng *rand.Rand) *parking {
	if c.ParkShare <= 0 || rng.Float64() >= c.ParkShare {
		return nil
	}
	return &parking{
		start: rng.Int64N(int64(c.Duration)/3 + 1),
		dur:   int64(c.ParkMin) + rng.Int64N(int64(c.ParkMax-c.ParkMin)+1),
		from:  -1, to: -1,
	}
}

// signed is the distance from the point to f's edge, positive inside.
func signed(f *fence.Fence, lat, lon float64) float64 {
	d := f.EdgeDistance(lat, lon)
	if !f.Contains(lat, lon) {
		d = -d
	}
	return d
}

// spot picks the parking place from (x, y): the nearest fence edge, and on
// it a point want metres inside (negative: outside), found by Newton's
// method on the signed distance, which works for circles and polygons
// alike. ok is false when there are no fences.
func (c *Config) spot(fences []*fence.Fence, x, y, want float64) (sx, sy float64, ok bool) {
	cosLat := math.Cos(c.CenterLat * math.Pi / 180)
	at := func(x, y float64) (lat, lon float64) {
		return c.CenterLat + y/mPerDegLat, c.CenterLon + x/(mPerDegLat*cosLat)
	}
	lat, lon := at(x, y)
	var near *fence.Fence
	best := math.Inf(1)
	for _, f := range fences {
		if d := f.EdgeDistance(lat, lon); d < best {
			near, best = f, d
		}
	}
	if near == nil {
		return 0, 0, false
	}
	s := func(x, y float64) float64 { la, lo := at(x, y); return signed(near, la, lo) }
	const h = 0.5 // metres, the finite difference
	for range 30 {
		d := s(x, y)
		if math.Abs(d-want) < 0.1 {
			break
		}
		gx, gy := (s(x+h, y)-s(x-h, y))/(2*h), (s(x, y+h)-s(x, y-h))/(2*h)
		g2 := gx*gx + gy*gy
		if g2 < 1e-6 {
			break // on a ridge of the distance (a fence's centre): stay
		}
		x, y = x-(d-want)*gx/g2, y-(d-want)*gy/g2
	}
	return x, y, true
}
