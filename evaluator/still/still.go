// Package still tells whether a device stands still: its fixes have stayed
// near one spot for a while. A device standing still has crossed no fence
// edge, whatever its jittering fixes say: a truck parked on a fence line
// would otherwise flip in and out for as long as it stands there, since
// a receiver's error drifts for tens of seconds at a time and no margin
// outlasts it (docs/fences.md, "A device standing still").
package still

import "math"

// Scale is the fixed point of positions: degrees × Scale, as the
// history keeps them (history.Fixed; the test holds them equal).
const Scale = 1e7

// For is how long a device's fixes must stay near one spot before it
// stands still: longer than a vehicle waits at a junction, shorter than
// it stands at a loading bay.
const For = 30_000_000_000 // ns

// MinRadius is the least distance from the spot, metres, that a fix may
// lie and the device still stand there. Road vehicles cover it in a few
// seconds, so they never stand while they drive; a receiver's drift and
// jitter stay within it.
const MinRadius = 25.0

// PerAcc is how many times its accuracy a fix may lie from the spot and
// the device still stand there: a fix lies within about 2 × acc of where
// the device is (acc is 1.5 σ per axis), and the spot, the mean of fixes
// whose error drifts for as long as its first 30 s, is itself about as
// far off; a receiver reporting half its error needs the rest.
const PerAcc = 4.0

// MaxGap is the longest silence after which a fix beyond the radius is
// taken for a move at once, not for an outlier: the device had time to
// go.
const MaxGap = 10_000_000_000 // ns

// Spot is a device's spot: the mean position of the fixes of its first
// For there, and since when its fixes have been near it. After For the
// spot stays put: one that followed the newest fixes would follow a
// device walking slowly, which would then never leave it. Its zero value
// has seen no fix. It also keeps how much the device's radius has grown
// (Grow), which a new spot keeps.
type Spot struct {
	Since    int64  // event time of the first fix near the spot, Unix ns
	Lat, Lon int32  // degrees × Scale
	Span     uint32 // ms from Since to the last fix near the spot
	N        uint16 // fixes averaged
	Far      uint8  // metres: the farthest a fix near the spot has lain since the spot began or the radius grew
	Bits     uint8  // bit 0: the last fix lay beyond the radius; bits 1–4: Grow
}

// MaxGrow caps Grow: a radius at most four times Radius.
const MaxGrow = 12

// Grown returns an empty spot of a device whose radius has grown by
// grow quarters (Spot.Grow).
func Grown(grow uint8) Spot { return Spot{Bits: min(grow, MaxGrow) << 1} }

// Grow is how many quarters of Radius the device's radius has grown by:
// once each time its fixes came back from near the radius's edge
// (returns).
func (s *Spot) Grow() uint8 { return s.Bits >> 1 }

func (s *Spot) away() bool { return s.Bits&1 != 0 }

func (s *Spot) setAway(away bool) {
	s.Bits &^= 1
	if away {
		s.Bits |= 1
	}
}

// Observe takes the device's next fix, in event order: at lat, lon
// (degrees × Scale) with an accuracy of acc decimetres (0: none), taken at
// event. It reports whether the device stands still at that fix: its
// fixes have stayed near the spot for For. A fix farther than
// Radius(acc) from the spot moves the spot there when the fix before it
// was beyond too, or when it comes more than MaxGap after the last fix
// near the spot; one alone (an outlier) leaves it.
func (s *Spot) Observe(event int64, lat, lon int32, acc uint16) bool {
	last := s.Since + int64(s.Span)*1_000_000
	if s.N == 0 || event < last {
		s.restart(event, lat, lon)
		return false
	}
	d, r := Distance(s.Lat, s.Lon, lat, lon), s.Radius(acc)
	if d > r {
		if s.away() || event-last > MaxGap {
			s.restart(event, lat, lon)
			return false
		}
		s.setAway(true)
		return last-s.Since >= For
	}
	s.setAway(false)
	s.returns(d, r)
	if event-s.Since < For && s.N < math.MaxUint16 {
		s.N++
		n := int64(s.N)
		s.Lat += int32((int64(lat) - int64(s.Lat)) / n)
		s.Lon += int32((int64(lon) - int64(s.Lon)) / n)
	}
	if event-s.Since > math.MaxUint32*1_000_000/2 {
		s.Since = event - For // weeks standing: keep Span from overflowing
	}
	s.Span = uint32((event - s.Since) / 1_000_000)
	return event-s.Since >= For
}

// Standing reports whether the device stood at the spot at its last fix
// near it.
func (s *Spot) Standing() bool { return s.N > 0 && int64(s.Span)*1_000_000 >= For }

// StoodAt makes a fix the device is known to have stood at (one judged
// standing live, seen again in a replay) the spot, standing since For
// before it.
func (s *Spot) StoodAt(event int64, lat, lon int32) {
	*s = Spot{Since: event - For, Lat: lat, Lon: lon, N: 1, Span: uint32(For / 1_000_000), Bits: s.Bits &^ 1}
}

// restart makes the fix the spot's first. The radius's growth is the
// device's, not the spot's: it stays.
func (s *Spot) restart(event int64, lat, lon int32) {
	*s = Spot{Since: event, Lat: lat, Lon: lon, N: 1, Bits: s.Bits &^ 1}
}

// returns grows the radius by a quarter when the device's fixes came
// back from near its edge (beyond ReturnFrom of it) to within half that
// distance of the spot: drift that comes back, which a walk never does,
// larger than the device's acc said. It counts before the device has
// stood too: a receiver whose fixes scatter far beyond what its acc
// says leaves a radius made from acc every few fixes, never stands, and
// would otherwise never grow it.
func (s *Spot) returns(d, r float64) {
	if d > float64(s.Far) {
		s.Far = uint8(min(math.Ceil(d), math.MaxUint8))
		return
	}
	if float64(s.Far) > ReturnFrom*r && d < float64(s.Far)/2 && s.Grow() < MaxGrow {
		s.Bits += 2
		s.Far = 0
	}
}

// ReturnFrom is how near the edge of the radius, as a share of it, a fix
// must have come for a return from there to grow the radius.
const ReturnFrom = 0.7

// Radius is how far from the spot, metres, a fix of accuracy acc may
// lie and the device still stand there: Radius(acc), grown by Grow
// quarters.
func (s *Spot) Radius(acc uint16) float64 { return Radius(acc) * float64(4+s.Grow()) / 4 }

// Radius is how far from the spot, metres, a fix of accuracy acc
// (decimetres) may lie and the device still stand there.
func Radius(acc uint16) float64 { return max(MinRadius, PerAcc*float64(acc)/10) }

// Distance returns the distance in metres between two fixed-point
// positions, on the local plane (they are tens of metres apart).
func Distance(lat1, lon1, lat2, lon2 int32) float64 {
	const mPerDeg = 111_320.0
	dy := float64(int64(lat2)-int64(lat1)) / Scale * mPerDeg
	dx := float64(int64(lon2)-int64(lon1)) / Scale * mPerDeg * math.Cos(float64(lat1)/Scale*math.Pi/180)
	return math.Hypot(dx, dy)
}
