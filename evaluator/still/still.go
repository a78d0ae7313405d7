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
// has seen no fix.
type Spot struct {
	Since    int64  // event time of the first fix near the spot, Unix ns
	Lat, Lon int32  // degrees × Scale
	Span     uint32 // ms from Since to the last fix near the spot
	N        uint16 // fixes averaged
	Away     bool   // the last fix lay beyond the radius
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
	if Distance(s.Lat, s.Lon, lat, lon) > Radius(acc) {
		if s.Away || event-last > MaxGap {
			s.restart(event, lat, lon)
			return false
		}
		s.Away = true
		return last-s.Since >= For
	}
	s.Away = false
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
	*s = Spot{Since: event - For, Lat: lat, Lon: lon, N: 1, Span: uint32(For / 1_000_000)}
}

// restart makes the fix the spot's first.
func (s *Spot) restart(event int64, lat, lon int32) {
	*s = Spot{Since: event, Lat: lat, Lon: lon, N: 1}
}

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
