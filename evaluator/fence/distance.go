package fence

import "math"

// mPerDeg is the length of a degree of latitude, in metres, on the
// sphere the circles use.
const mPerDeg = earthRadius * deg

// EdgeDistance returns how far the point (degrees) is from the fence's
// edge, in metres, inside or out: for a polygon, the nearest edge of any
// of its rings (holes included); for a circle, the distance from its
// boundary. Polygons use a local planar approximation around the point
// (metres east and north), accurate to well under a metre at fence
// scale; it is what accuracy hysteresis compares a fix's error with.
// NaN coordinates give NaN.
func (f *Fence) EdgeDistance(lat, lon float64) float64 {
	if f.isCircle {
		return f.circle.edgeDistance(lat, lon)
	}
	kx := mPerDeg * math.Cos(lat*deg) // metres per degree of longitude here
	best := math.Inf(1)
	start := 0
	for i := range f.rings {
		r := &f.rings[i]
		c := f.coords[start:r.end]
		start = r.end
		// A ring whose box is farther than the best edge so far has none nearer.
		dx := max(r.min[0]-lon, lon-r.max[0], 0) * kx
		dy := max(r.min[1]-lat, lat-r.max[1], 0) * mPerDeg
		if dx*dx+dy*dy >= best*best {
			continue
		}
		best = min(best, ringDistance(c, lon, lat, kx))
	}
	return best
}

// ringDistance returns the distance in metres from (x, y) to the nearest
// edge of the closed flat ring r, kx metres per degree of longitude.
func ringDistance(r []float64, x, y, kx float64) float64 {
	best := math.Inf(1)
	ax, ay := (r[0]-x)*kx, (r[1]-y)*mPerDeg
	for i := 2; i+1 < len(r); i += 2 {
		bx, by := (r[i]-x)*kx, (r[i+1]-y)*mPerDeg
		// The point is the origin: project it on the segment a-b.
		ex, ey := bx-ax, by-ay
		t := 0.0
		if l := ex*ex + ey*ey; l > 0 {
			t = min(max(-(ax*ex+ay*ey)/l, 0), 1)
		}
		px, py := ax+t*ex, ay+t*ey
		best = min(best, px*px+py*py)
		ax, ay = bx, by
	}
	return math.Sqrt(best)
}

// edgeDistance is |great-circle distance to the centre − radius|.
func (c *circle) edgeDistance(lat, lon float64) float64 {
	φ := lat * deg
	s1 := math.Sin((φ - c.lat) / 2)
	s2 := math.Sin((lon*deg - c.lon) / 2)
	h := min(s1*s1+c.cosLat*math.Cos(φ)*s2*s2, 1)
	d := 2 * math.Asin(math.Sqrt(h)) * earthRadius
	return math.Abs(d - c.radius)
}
