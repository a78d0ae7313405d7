package fleet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/edgefence/edgefence/evaluator/fence"
)

// Fences generates n fences over the model's area: convex polygons of
// 6–12 vertices and circles, 100–600 m in radius, so that vehicles at road
// speed cross one every minute or two.
func (c *Config) Fences(n int) (*fence.Set, error) { return fence.Parse(c.FencesGeoJSON(n)) }

// FencesGeoJSON is the GeoJSON of Fences, to replay a simulated capture
// against the same fences.
func (c *Config) FencesGeoJSON(n int) []byte {
	rng := rand.New(rand.NewPCG(c.Seed, math.MaxUint64))
	half := c.AreaKm * 500
	cosLat := math.Cos(c.CenterLat * math.Pi / 180)
	var b strings.Builder
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		lat := c.CenterLat + (rng.Float64()*2-1)*half/mPerDegLat
		lon := c.CenterLon + (rng.Float64()*2-1)*half/(mPerDegLat*cosLat)
		r := 100 + rng.Float64()*500
		if rng.IntN(3) == 0 {
			fmt.Fprintf(&b, `{"type":"Feature","id":"f%04d","properties":{"radius":%.1f},"geometry":{"type":"Point","coordinates":[%.6f,%.6f]}}`, i, r, lon, lat)
			continue
		}
		k := 6 + rng.IntN(7)
		fmt.Fprintf(&b, `{"type":"Feature","id":"f%04d","geometry":{"type":"Polygon","coordinates":[[`, i)
		for j := 0; j <= k; j++ {
			a := 2 * math.Pi * float64(j%k) / float64(k)
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "[%.6f,%.6f]", lon+r*math.Cos(a)/(mPerDegLat*cosLat), lat+r*math.Sin(a)/mPerDegLat)
		}
		b.WriteString(`]]}}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}
