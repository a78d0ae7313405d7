package fence

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

func polygonSet(t *testing.T, id, coords string) *Set {
	t.Helper()
	s, err := Parse([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"` + id +
		`","properties":{},"geometry":{"type":"Polygon","coordinates":[` + coords + `]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A bow tie loads (a file with it still works) but is named in a warning;
// an ordinary polygon, one with a repeated vertex, and one with a hole
// are not.
func TestWarningsNameSelfIntersectingPolygons(t *testing.T) {
	bowtie := polygonSet(t, "bowtie", `[[0,0],[1,1],[1,0],[0,1],[0,0]]`)
	w := bowtie.Warnings()
	if len(w) != 1 || w[0].ID != "bowtie" {
		t.Errorf("bow tie: warnings %v, want one naming it", w)
	}
	for name, coords := range map[string]string{
		"square":          `[[0,0],[1,0],[1,1],[0,1],[0,0]]`,
		"repeated vertex": `[[0,0],[1,0],[1,0],[1,1],[0,1],[0,0]]`,
		"with a hole":     `[[0,0],[4,0],[4,4],[0,4],[0,0]],[[1,1],[1,2],[2,2],[2,1],[1,1]]`,
		"concave":         `[[0,0],[4,0],[4,4],[2,1],[0,4],[0,0]]`,
	} {
		if w := polygonSet(t, "f", coords).Warnings(); len(w) != 0 {
			t.Errorf("%s: warnings %v, want none", name, w)
		}
	}
	if w := polygonSet(t, "touch", `[[0,0],[2,0],[2,2],[1,0],[0,2],[0,0]]`).Warnings(); len(w) != 1 {
		t.Errorf("a ring touching itself at a vertex: warnings %v, want one", w)
	}
}

// A convex polygon (points on a circle, in order) never crosses itself;
// the same points visited in a star order (every second one, n odd)
// always do.
func TestPropertySelfIntersection(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(3, 40).Draw(t, "n")
		ring := make([]float64, 0, 2*n+2)
		for i := range n {
			a := 2 * math.Pi * float64(i) / float64(n)
			ring = append(ring, math.Cos(a), math.Sin(a))
		}
		ring = append(ring, ring[0], ring[1])
		if a, b, ok := selfIntersection(ring); ok {
			t.Fatalf("convex %d-gon: edges %d and %d cross", n, a, b)
		}
		if n%2 == 1 && n >= 5 {
			star := make([]float64, 0, len(ring))
			for i := range n {
				k := (2 * i) % n
				star = append(star, ring[2*k], ring[2*k+1])
			}
			star = append(star, star[0], star[1])
			if _, _, ok := selfIntersection(star); !ok {
				t.Fatalf("star %d-gon: no crossing found", n)
			}
		}
	})
}

// A ring of 80,000 vertices zigzagging around a circle (the broker tests'
// heavy fence) is checked, or given up on, at once, not in O(n²).
func TestSelfIntersectionOfAHeavyRingIsBounded(t *testing.T) {
	const n = 80_000
	ring := make([]float64, 0, 2*n+2)
	for i := range n {
		a := 2 * math.Pi * float64(i) / n
		r := 0.01
		if i%2 == 1 {
			r = 0.009
		}
		ring = append(ring, 13.4+r*math.Cos(a), 52.5+r*math.Sin(a))
	}
	ring = append(ring, ring[0], ring[1])
	if a, b, ok := selfIntersection(ring); ok {
		t.Errorf("the zigzag ring crosses itself at edges %d and %d", a, b)
	}
}
