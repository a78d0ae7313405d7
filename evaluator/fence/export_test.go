package fence

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// Every fence of the bundled file, written out and parsed again, is the
// same fence: the same id, name, dwell, and the same answer at points
// around it.
func TestAppendGeoJSONRoundTrip(t *testing.T) {
	data, err := os.ReadFile("../../fences.geojson")
	if err != nil {
		t.Fatal(err)
	}
	set, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	out := []byte(`{"type":"FeatureCollection","features":[`)
	for i, f := range set.Fences() {
		if i > 0 {
			out = append(out, ',')
		}
		out = f.AppendGeoJSON(out)
	}
	out = append(out, "]}"...)
	if !json.Valid(out) {
		t.Fatalf("not JSON: %s", out)
	}
	again, err := Parse(out)
	if err != nil {
		t.Fatalf("parse what was written: %v\n%s", err, out)
	}
	if again.Len() != set.Len() {
		t.Fatalf("%d fences back, want %d", again.Len(), set.Len())
	}
	for _, f := range set.Fences() {
		g := again.ByID(f.ID)
		if g == nil || g.Name != f.Name || g.HasDwell != f.HasDwell || g.Dwell != f.Dwell || g.isCircle != f.isCircle {
			t.Fatalf("%s came back as %+v", f.ID, g)
		}
		if f.isCircle && math.Abs(g.circle.radius-f.circle.radius) > 0.01 {
			t.Errorf("%s radius %v, want %v", f.ID, g.circle.radius, f.circle.radius)
		}
		// A grid over the fence's box, a little wider.
		w, h := f.max[0]-f.min[0], f.max[1]-f.min[1]
		for i := -2; i <= 22; i++ {
			for j := -2; j <= 22; j++ {
				lon, lat := f.min[0]+w*float64(i)/20, f.min[1]+h*float64(j)/20
				if f.Contains(lat, lon) != g.Contains(lat, lon) {
					t.Fatalf("%s at %v,%v: %v before, %v after", f.ID, lat, lon, f.Contains(lat, lon), g.Contains(lat, lon))
				}
			}
		}
	}
}

// A fence whose id and name hold bytes Go quotes as \x01 and \x7f is
// written as JSON, and reads back the same.
func TestAppendGeoJSONEscapes(t *testing.T) {
	set, err := Parse([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"a\u0001\u007f\u2028\"\\","properties":{"name":"\u0007 \u00e9","radius":5},"geometry":{"type":"Point","coordinates":[13.4,52.5]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := set.Fences()[0]
	out := f.AppendGeoJSON(nil)
	if !json.Valid(out) {
		t.Fatalf("not JSON: %s", out)
	}
	again, err := Parse([]byte(`{"type":"FeatureCollection","features":[` + string(out) + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	if g := again.Fences()[0]; g.ID != f.ID || g.Name != f.Name {
		t.Fatalf("read back %q %q, want %q %q", g.ID, g.Name, f.ID, f.Name)
	}
}
