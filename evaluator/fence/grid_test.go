package fence

import (
	"fmt"
	"strings"
	"testing"
)

// A country-sized fence among many small ones goes to the R-tree side of
// the index; a point must still find both kinds, and only the right ones.
func TestHugeFenceAmongSmallOnes(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	b.WriteString(`{"type":"Feature","id":"germany","geometry":{"type":"Polygon","coordinates":[[[5.9,47.3],[15.0,47.3],[15.0,55.0],[5.9,55.0],[5.9,47.3]]]}}`)
	for i := range 100 { // 100 small squares of ~100 m along a line in Berlin
		lon := 13.30 + float64(i)*0.002
		fmt.Fprintf(&b, `,{"type":"Feature","id":"s%03d","geometry":{"type":"Polygon","coordinates":[[[%.4f,52.5],[%.4f,52.5],[%.4f,52.501],[%.4f,52.501],[%.4f,52.5]]]}}`,
			i, lon, lon+0.0015, lon+0.0015, lon, lon)
	}
	b.WriteString(`]}`)
	s, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if s.index.nBig != 1 {
		t.Fatalf("%d fences in the R-tree, want the one huge fence", s.index.nBig)
	}
	q := NewSearcher()
	for _, tc := range []struct {
		lat, lon float64
		want     string
	}{
		{52.5005, 13.3007, "[germany s000]"},
		{52.5005, 13.3987, "[germany s049]"},
		{52.5005, 13.3017, "[germany]"}, // in the gap between two squares
		{52.6, 13.3007, "[germany]"},
		{40.0, 13.3, "[]"},
	} {
		var ids []string
		for _, f := range q.Contains(s, tc.lat, tc.lon) {
			ids = append(ids, f.ID)
		}
		if got := fmt.Sprint(ids); got != tc.want && !(tc.want == "[]" && ids == nil) {
			t.Errorf("Contains(%v, %v) = %v, want %v", tc.lat, tc.lon, got, tc.want)
		}
	}
}

// Grid cells must agree with the bounding-box test at cell edges and for
// negative coordinates, where truncation instead of floor would misfile.
func TestGridCellEdges(t *testing.T) {
	s, err := Parse([]byte(`{"type":"FeatureCollection","features":[
	 {"type":"Feature","id":"sw","geometry":{"type":"Polygon","coordinates":[[[-0.002,-0.002],[0.002,-0.002],[0.002,0.002],[-0.002,0.002],[-0.002,-0.002]]]}},
	 {"type":"Feature","id":"far","geometry":{"type":"Polygon","coordinates":[[[-70.01,-33.01],[-69.99,-33.01],[-69.99,-32.99],[-70.01,-32.99],[-70.01,-33.01]]]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	q := NewSearcher()
	for _, p := range [][2]float64{{-0.0019, -0.0019}, {0.0019, 0.0019}, {-0.0019, 0.0019}, {0, 0}} {
		if got := q.Contains(s, p[0], p[1]); len(got) != 1 || got[0].ID != "sw" {
			t.Errorf("Contains(%v) = %v, want sw", p, got)
		}
	}
	if got := q.Contains(s, -33.0, -70.0); len(got) != 1 || got[0].ID != "far" {
		t.Errorf("Contains(-33, -70) = %v, want far", got)
	}
}
