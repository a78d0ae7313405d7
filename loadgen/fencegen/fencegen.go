// Package fencegen generates the fences a load walks devices across and
// the GeoJSON file the broker under load reads them from, and gives each
// device its walk: positions out and back across a fence's edge, so that
// a known share of pings causes a transition.
package fencegen

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Fence is a generated fence: a circle, or a regular polygon whose
// vertices lie on the circle. Devices walk across its edge along a line
// through its centre: for a polygon the line through the middle of one
// side, where the edge is at the apothem.
type Fence struct {
	ID       string
	Lat, Lon float64 // centre
	Radius   float64 // metres: the circle's radius, the polygon's circumradius
	Sides    int     // 0: circle
}

// Generated fences lie on a grid centred on Berlin, far enough apart that
// no device crossing one is ever inside another.
const (
	gridLat0, gridLon0 = 52.52, 13.40
	gridSpacing        = 1500.0 // metres between fence centres
	metresPerDegLat    = 111320.0
)

// Generate returns n non-overlapping fences, alternately circles
// and polygons of 6–16 sides, 100–600 m across, with DWELL disabled so
// that only ENTER and EXIT happen. It is deterministic.
func Generate(n int) []Fence {
	cols := int(math.Ceil(math.Sqrt(float64(n))))
	fs := make([]Fence, n)
	for i := range fs {
		row, col := i/cols, i%cols
		lat := gridLat0 + (float64(row)-float64(cols)/2)*gridSpacing/metresPerDegLat
		lon := gridLon0 + (float64(col)-float64(cols)/2)*gridSpacing/(metresPerDegLat*math.Cos(lat*math.Pi/180))
		f := Fence{ID: "lg-" + strconv.Itoa(i), Lat: lat, Lon: lon, Radius: 100 + float64((i*37)%501)}
		if i%2 == 1 {
			f.Sides = 6 + (i/2)%11
		}
		fs[i] = f
	}
	return fs
}

// GeoJSON renders fences as a FeatureCollection edgefence loads.
func GeoJSON(fs []Fence) []byte {
	var b strings.Builder
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i, f := range fs {
		if i > 0 {
			b.WriteString(",\n")
		}
		if f.Sides == 0 {
			fmt.Fprintf(&b, `{"type":"Feature","id":%q,"properties":{"radius":%g,"dwell":0},"geometry":{"type":"Point","coordinates":[%.7f,%.7f]}}`,
				f.ID, f.Radius, f.Lon, f.Lat)
			continue
		}
		fmt.Fprintf(&b, `{"type":"Feature","id":%q,"properties":{"dwell":0},"geometry":{"type":"Polygon","coordinates":[[`, f.ID)
		for k := 0; k <= f.Sides; k++ {
			a := 2 * math.Pi * float64(k%f.Sides) / float64(f.Sides)
			lat, lon := f.offset(a, f.Radius)
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "[%.7f,%.7f]", lon, lat)
		}
		b.WriteString(`]]}}`)
	}
	b.WriteString("]}\n")
	return []byte(b.String())
}

// Write writes n generated fences to path.
func Write(path string, n int) ([]Fence, error) {
	fs := Generate(n)
	return fs, os.WriteFile(path, GeoJSON(fs), 0o644)
}

// offset is the point dist metres from the centre at bearing a (radians,
// counter-clockwise from east), on a local equirectangular projection:
// accurate to centimetres at these sizes.
func (f *Fence) offset(a, dist float64) (lat, lon float64) {
	lat = f.Lat + dist*math.Sin(a)/metresPerDegLat
	lon = f.Lon + dist*math.Cos(a)/(metresPerDegLat*math.Cos(f.Lat*math.Pi/180))
	return lat, lon
}

// edge returns the bearing of the crossing line number k and the distance
// of the edge from the centre along it.
func (f *Fence) edge(k int) (a, dist float64) {
	if f.Sides == 0 {
		return 2 * math.Pi * float64(k%360) / 360, f.Radius
	}
	s := k % f.Sides
	return 2 * math.Pi * (float64(s) + 0.5) / float64(f.Sides), f.Radius * math.Cos(math.Pi/float64(f.Sides))
}

// Walk parameters: a device walks out and back across its fence's edge,
// crossEvery pings on each side, from walkMin to walkMin+(crossEvery-1)/2
// steps of walkStep metres deep. walkMin clears the engine's accuracy
// margin for the load generator's fixes (2 × acc 8.5 m), so the first
// fix on each side is the one that makes the transition.
const (
	walkMin  = 25.0
	walkStep = 8.0
)

// Walk returns the payload prefixes ({"lat":..,"lon":..,"ts":) of one
// device's cycle of 2×crossEvery positions along crossing line number
// line: the first crossEvery inside the fence, the rest outside.
func (f *Fence) Walk(line, crossEvery int) [][]byte {
	a, edge := f.edge(line)
	out := make([][]byte, 2*crossEvery)
	for s := range out {
		j := s % crossEvery
		depth := walkMin + walkStep*float64(min(j, crossEvery-1-j))
		d := edge - depth
		if s >= crossEvery {
			d = edge + depth
		}
		lat, lon := f.offset(a, d)
		b := make([]byte, 0, 48)
		b = append(b, `{"lat":`...)
		b = strconv.AppendFloat(b, lat, 'f', 6, 64)
		b = append(b, `,"lon":`...)
		b = strconv.AppendFloat(b, lon, 'f', 6, 64)
		b = append(b, `,"ts":`...)
		out[s] = b
	}
	return out
}
