// Package fence loads geofences from GeoJSON into an immutable, spatially
// indexed Set and answers "which fences contain this point" without
// allocating.
//
// Geometry model: polygons are planar in (lon, lat) degrees, which is what
// GeoJSON producers draw and is accurate for fences of city scale. Circles
// use great-circle (haversine) distance on a spherical Earth. Fences that
// cross the antimeridian (±180° longitude) are not supported as single
// polygons: a polygon is always read as the region between its longitudes,
// so split such a fence into a MultiPolygon at ±180°. Circles near the
// antimeridian or a pole do work (their index box just widens).
package fence

import (
	"math"
	"time"
)

// earthRadius is the IUGG mean Earth radius in metres.
const earthRadius = 6371008.8

// MaxRadius is the largest circle radius a fence may have, in metres:
// about half the Earth's circumference (20,015 km), beyond which a circle
// covers the globe, so a larger one is a mistake, not a fence.
const MaxRadius = 20_000_000

// MaxMargin is the largest accuracy margin a fence may set: ten times a
// fix's accuracy is already fifteen standard deviations.
const MaxMargin = 10

const deg = math.Pi / 180

// Fence is one geofence of a Set. Immutable once loaded.
type Fence struct {
	ID       string        // feature "id" or properties.id; a valid single MQTT topic level
	Name     string        // properties.name, optional
	Dwell    time.Duration // properties.dwell in seconds (JSON number >= 0); meaningful only when HasDwell
	HasDwell bool
	// MaxAccuracy is properties.max_accuracy in metres (JSON number >= 0):
	// this fence's cap on the fix accuracy that widens its edge, instead
	// of the engine's; meaningful only when HasMaxAccuracy.
	MaxAccuracy    float64
	HasMaxAccuracy bool
	// Margin is properties.accuracy_margin (JSON number >= 0): how many
	// times a fix's accuracy it must lie across this fence's edge to
	// change a device's state there, instead of the engine's
	// --accuracy-margin; meaningful only when HasMargin. A loading bay on
	// a fence line wants more than an open field.
	Margin    float64
	HasMargin bool
	// Single is properties.confirm set to false: one fix clear of the
	// margin changes a device's state here, with no second to agree
	// (Hold). For fences a device crosses in one fix.
	Single bool

	rank int // position in the Set's ID order: results sort on it, not on strings
	// depth is how far from its edge a point inside the fence can be, in
	// metres: a circle's radius, a polygon's estimated on a grid (see
	// estimateDepth). Accuracy hysteresis never asks for more than ¾ of it.
	depth    float64
	isCircle bool
	circle   circle
	rings    []ring     // polygons in order, each an outer ring then its holes
	coords   []float64  // all rings as flat lon,lat pairs, each ring closed
	min, max [2]float64 // bounding box as [lon, lat], conservative for circles
}

// DwellOf returns f's dwell time in nanoseconds, def when it has none of
// its own, and false when DWELL is off for it.
func (f *Fence) DwellOf(def time.Duration) (int64, bool) {
	if f.HasDwell {
		def = f.Dwell
	}
	return int64(def), def > 0
}

// ring is coords[end of previous ring : end]. Flat shared slices keep the
// point-in-polygon loop tight and a lookup's memory reads few.
type ring struct {
	end      int
	hole     bool
	min, max [2]float64 // [lon, lat]: lets MultiPolygon parts and holes be skipped cheaply
}

func (r *ring) around(x, y float64) bool {
	return x >= r.min[0] && x <= r.max[0] && y >= r.min[1] && y <= r.max[1]
}

// circle precomputes everything the haversine test needs except the point.
type circle struct {
	lat, lon float64 // radians
	cosLat   float64
	hav      float64 // sin²(θ/2) for angular radius θ: compare before asin/sqrt
	radius   float64 // metres, for the distance to the edge
}

// Contains reports whether the point (degrees) lies inside this fence.
//
// Polygons use the even-odd crossing rule (a point inside a hole is outside).
// A point exactly on a polygon edge is assigned deterministically by the
// half-open crossing rule: it may be inside or outside, but two fences that
// share an edge never both claim it (up to floating-point rounding). Circles
// include their boundary: distance <= radius. NaN coordinates are outside.
func (f *Fence) Contains(lat, lon float64) bool {
	if !(lon >= f.min[0] && lon <= f.max[0] && lat >= f.min[1] && lat <= f.max[1]) {
		return false
	}
	return f.contains(lat, lon)
}

// contains skips the bbox test, which the index has already done.
func (f *Fence) contains(lat, lon float64) bool {
	if f.isCircle {
		return f.circle.contains(lat, lon)
	}
	in, start := false, 0
	for i := range f.rings {
		r := &f.rings[i]
		c := f.coords[start:r.end]
		start = r.end
		if !r.hole {
			if in { // the previous polygon contains the point
				return true
			}
			in = r.around(lon, lat) && ringContains(c, lon, lat)
		} else if in && r.around(lon, lat) && ringContains(c, lon, lat) {
			in = false
		}
	}
	return in
}

// Rank returns f's position in its Set's ID order (Set.ByRank). A
// reload that adds or removes fences renumbers them.
func (f *Fence) Rank() int { return f.rank }

// ringContains is W. R. Franklin's pnpoly over a closed flat ring: because the
// closing position is stored, consecutive pairs cover every edge.
func ringContains(r []float64, x, y float64) bool {
	in := false
	x1, y1 := r[0], r[1]
	for i := 2; i+1 < len(r); i += 2 {
		x2, y2 := r[i], r[i+1]
		if (y1 > y) != (y2 > y) && x < (x2-x1)*(y-y1)/(y2-y1)+x1 {
			in = !in
		}
		x1, y1 = x2, y2
	}
	return in
}

func newCircle(lat, lon, radius float64) circle {
	θ := radius / earthRadius
	hav := 2.0 // above any haversine value: the circle covers the globe
	if θ < math.Pi {
		s := math.Sin(θ / 2)
		hav = s * s
	}
	φ := lat * deg
	return circle{lat: φ, lon: lon * deg, cosLat: math.Cos(φ), hav: hav, radius: radius}
}

func (c *circle) contains(lat, lon float64) bool {
	φ := lat * deg
	s1 := math.Sin((φ - c.lat) / 2)
	s2 := math.Sin((lon*deg - c.lon) / 2)
	return s1*s1+c.cosLat*math.Cos(φ)*s2*s2 <= c.hav
}

// circleBounds returns a [lon, lat] box covering the whole spherical cap. The
// longitude half-width is the tangent-point offset asin(sin θ / cos φ); a cap
// that reaches a pole or wraps the antimeridian gets the full longitude range.
func circleBounds(lat, lon, radius float64) (min, max [2]float64) {
	θ := radius / earthRadius
	dLat := θ/deg*(1+1e-9) + 1e-9 // margin: never lose a point to rounding
	min = [2]float64{-180, math.Max(lat-dLat, -90)}
	max = [2]float64{180, math.Min(lat+dLat, 90)}
	if θ >= math.Pi/2 || lat+dLat >= 90 || lat-dLat <= -90 {
		return min, max
	}
	dLon := math.Asin(math.Min(1, math.Sin(θ)/math.Cos(lat*deg)))/deg*(1+1e-9) + 1e-9
	if lon-dLon < -180 || lon+dLon > 180 {
		return min, max
	}
	min[0], max[0] = lon-dLon, lon+dLon
	return min, max
}
