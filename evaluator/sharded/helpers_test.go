package sharded

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
)

// The test fences near Berlin, as in evaluator's tests: depot and yard
// side by side, zone overlapping both.
const testFences = `{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"depot","properties":{"name":"Depot"},"geometry":{"type":"Polygon","coordinates":[[[13.400,52.500],[13.410,52.500],[13.410,52.510],[13.400,52.510],[13.400,52.500]]]}},
 {"type":"Feature","id":"yard","properties":{"dwell":0},"geometry":{"type":"Polygon","coordinates":[[[13.410,52.500],[13.420,52.500],[13.420,52.510],[13.410,52.510],[13.410,52.500]]]}},
 {"type":"Feature","id":"zone","properties":{"dwell":3},"geometry":{"type":"Polygon","coordinates":[[[13.405,52.500],[13.415,52.500],[13.415,52.510],[13.405,52.510],[13.405,52.500]]]}}
]}`

// Positions relative to the test fences.
var (
	inDepot  = pos{52.505, 13.402} // depot only
	inDepotZ = pos{52.505, 13.407} // depot and zone
	inYardZ  = pos{52.505, 13.412} // yard and zone
	inYard   = pos{52.505, 13.418} // yard only
	outside  = pos{52.520, 13.402}
)

// points are the positions a device moves between in the concurrent tests.
var points = []pos{inDepot, inDepotZ, inYardZ, inYard, outside}

type pos struct{ lat, lon float64 }

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func mustFences(t testing.TB, geojson string) *fence.Set {
	t.Helper()
	s, err := fence.Parse([]byte(geojson))
	if err != nil {
		t.Fatalf("parse test fences: %v", err)
	}
	return s
}

// Benchmarks area: 50 km × 50 km around Berlin.
const (
	benchLat0, benchLon0 = 52.30, 13.05
	benchDLat, benchDLon = 0.45, 0.74
)

// randomFences builds, as in evaluator's benchmarks, n convex polygons of 8–16 vertices, 200–2000 m
// across, scattered over the benchmark area.
func randomFences(tb testing.TB, n int, r *rand.Rand) *fence.Set {
	var b strings.Builder
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		lat := benchLat0 + r.Float64()*benchDLat
		lon := benchLon0 + r.Float64()*benchDLon
		radius := (100 + r.Float64()*900) / 111320 // degrees of latitude
		k := 8 + r.IntN(9)
		fmt.Fprintf(&b, `{"type":"Feature","id":"f%d","geometry":{"type":"Polygon","coordinates":[[`, i)
		for j := 0; j <= k; j++ {
			a := 2 * math.Pi * float64(j%k) / float64(k)
			fmt.Fprintf(&b, "[%.6f,%.6f],", lon+radius*math.Cos(a)/math.Cos(lat*math.Pi/180), lat+radius*math.Sin(a))
		}
		s := b.String()
		b.Reset()
		b.WriteString(s[:len(s)-1])
		b.WriteString(`]]}}`)
	}
	b.WriteString(`]}`)
	set, err := fence.Parse([]byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return set
}
