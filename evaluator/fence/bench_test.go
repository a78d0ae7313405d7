package fence_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/edgefence/edgefence/evaluator/fence"
)

// area is a square of side km kilometres with its south-west corner in
// Berlin's outskirts.
type area struct{ lat0, lon0, dLat, dLon float64 }

func newArea(km float64) area {
	const lat0 = 52.30
	return area{lat0, 13.05, km * 1000 / metresPerDegree, km * 1000 / (metresPerDegree * math.Cos(lat0*math.Pi/180))}
}

func (a area) point(rng *rand.Rand) (lat, lon float64) {
	return a.lat0 + rng.Float64()*a.dLat, a.lon0 + rng.Float64()*a.dLon
}

// genFences returns a FeatureCollection of n random fences in the area: 3 in 4
// are star-shaped (so simple) polygons with 8-16 vertices, the rest circles,
// all 200-2000 m across.
func genFences(n int, a area) []byte {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	mLon := metresPerDegree * math.Cos(a.lat0*math.Pi/180)
	buf := []byte(`{"type":"FeatureCollection","features":[`)
	for i := range n {
		if i > 0 {
			buf = append(buf, ',')
		}
		lat, lon := a.point(rng)
		radius := 100 + rng.Float64()*900
		buf = fmt.Appendf(buf, `{"type":"Feature","id":"f%d","properties":{`, i)
		if i%4 == 3 {
			buf = fmt.Appendf(buf, `"radius":%.1f},"geometry":{"type":"Point","coordinates":[%.6f,%.6f]}}`, radius, lon, lat)
			continue
		}
		buf = append(buf, `},"geometry":{"type":"Polygon","coordinates":[[`...)
		k := 8 + rng.IntN(9)
		var first []byte
		for j := range k {
			a := (float64(j) + 0.8*rng.Float64()) * 2 * math.Pi / float64(k)
			r := radius * (0.6 + 0.4*rng.Float64())
			pos := fmt.Appendf(nil, "[%.6f,%.6f],", lon+r*math.Cos(a)/mLon, lat+r*math.Sin(a)/metresPerDegree)
			if j == 0 {
				first = pos
			}
			buf = append(buf, pos...)
		}
		buf = append(buf, first[:len(first)-1]...)
		buf = append(buf, "]]}}"...)
	}
	return append(buf, "]}"...)
}

// BenchmarkContains puts every size into the same 50 km x 50 km, so the
// number of fences containing a point grows with the size (see hits/op): at
// 100,000 fences a point lies in ~32 of them, and the time is spent on those.
func BenchmarkContains(b *testing.B) {
	benchContains(b, func(int) float64 { return 50 })
}

// BenchmarkContainsSpread keeps the density of 1,000 fences per 50 km x 50 km
// by growing the area with the size, isolating the cost of the index itself.
func BenchmarkContainsSpread(b *testing.B) {
	benchContains(b, func(n int) float64 { return 50 * math.Sqrt(float64(n)/1000) })
}

func benchContains(b *testing.B, km func(n int) float64) {
	for _, n := range []int{10, 1000, 100000} {
		b.Run("fences="+strconv.Itoa(n), func(b *testing.B) {
			a := newArea(km(n))
			set := mustParse(b, genFences(n, a))
			rng := rand.New(rand.NewPCG(2, 2))
			pts := make([][2]float64, 4096)
			for i := range pts {
				pts[i][0], pts[i][1] = a.point(rng)
			}
			q := fence.NewSearcher()
			hits, i := 0, 0
			b.ReportAllocs()
			for b.Loop() {
				p := pts[i%len(pts)]
				hits += len(q.Contains(set, p[0], p[1]))
				i++
			}
			b.ReportMetric(float64(hits)/float64(i), "hits/op")
		})
	}
}

func BenchmarkParse(b *testing.B) {
	data := genFences(1000, newArea(50))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fence.Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
