package fence_test

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
)

// metresPerDegree is the great-circle length of one degree of latitude.
const metresPerDegree = 6371008.8 * math.Pi / 180

// fc wraps feature JSON objects in a FeatureCollection.
func fc(features ...string) []byte {
	return []byte(`{"type":"FeatureCollection","features":[` + strings.Join(features, ",") + `]}`)
}

// square is a closed ring around (lon, lat) with half-width d degrees.
func square(lon, lat, d float64) string {
	return fmt.Sprintf("[[%g,%g],[%g,%g],[%g,%g],[%g,%g],[%g,%g]]",
		lon-d, lat-d, lon+d, lat-d, lon+d, lat+d, lon-d, lat+d, lon-d, lat-d)
}

func polygonFeature(id string, rings ...string) string {
	return fmt.Sprintf(`{"type":"Feature","id":%q,"properties":{},"geometry":{"type":"Polygon","coordinates":[%s]}}`,
		id, strings.Join(rings, ","))
}

func circleFeature(id string, lat, lon, radius float64) string {
	return fmt.Sprintf(`{"type":"Feature","id":%q,"properties":{"radius":%g},"geometry":{"type":"Point","coordinates":[%g,%g]}}`,
		id, radius, lon, lat)
}

func mustParse(t testing.TB, data []byte) *fence.Set {
	t.Helper()
	s, err := fence.Parse(data)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return s
}

func ids(fs []*fence.Fence) []string {
	out := []string{}
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

func TestContains(t *testing.T) {
	set := mustParse(t, fc(
		polygonFeature("yard", square(13.05, 52.05, 0.05), square(13.05, 52.05, 0.01)),
		`{"type":"Feature","id":"lots","geometry":{"type":"MultiPolygon","coordinates":[[`+square(14, 53, 0.01)+`],[`+square(14.5, 53, 0.01)+`]]}}`,
		circleFeature("circle", 52.52, 13.40, 100),
		polygonFeature("overlap-b", square(10, 50, 0.02)), // listed first to check sorting
		polygonFeature("overlap-a", square(10.01, 50, 0.02)),
	))
	north, east := 90/metresPerDegree, 90/(metresPerDegree*math.Cos(52.52*math.Pi/180))
	tests := []struct {
		name     string
		lat, lon float64
		want     []string
	}{
		{"polygon interior", 52.02, 13.02, []string{"yard"}},
		{"inside hole is outside", 52.05, 13.05, nil},
		{"outside polygon", 52.2, 13.05, nil},
		{"first polygon of multipolygon", 53, 14, []string{"lots"}},
		{"second polygon of multipolygon", 53.005, 14.495, []string{"lots"}},
		{"between multipolygon parts", 53, 14.25, nil},
		{"circle centre", 52.52, 13.40, []string{"circle"}},
		{"circle 90 m north", 52.52 + north, 13.40, []string{"circle"}},
		{"circle 90 m east", 52.52, 13.40 + east, []string{"circle"}},
		{"circle 110 m south", 52.52 - north*110/90, 13.40, nil},
		{"circle 110 m west", 52.52, 13.40 - east*110/90, nil},
		{"overlap sorted by id", 50, 10.005, []string{"overlap-a", "overlap-b"}},
		{"only overlap-b", 50, 9.985, []string{"overlap-b"}},
		{"NaN", math.NaN(), 13.05, nil},
	}
	q := fence.NewSearcher()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ids(q.Contains(set, tt.lat, tt.lon))
			if !slices.Equal(got, append([]string{}, tt.want...)) {
				t.Errorf("Searcher.Contains(%v, %v) = %v, want %v", tt.lat, tt.lon, got, tt.want)
			}
			for _, f := range set.Fences() {
				if in := slices.Contains(tt.want, f.ID); f.Contains(tt.lat, tt.lon) != in {
					t.Errorf("%s.Contains(%v, %v) = %v, want %v", f.ID, tt.lat, tt.lon, !in, in)
				}
			}
		})
	}
}

// destination returns the point dist metres from (lat, lon) on bearing brg
// (degrees), normalised to lon in [-180, 180].
func destination(lat, lon, brg, dist float64) (float64, float64) {
	φ1, λ1, θ, δ := lat*math.Pi/180, lon*math.Pi/180, brg*math.Pi/180, dist/6371008.8
	φ2 := math.Asin(math.Sin(φ1)*math.Cos(δ) + math.Cos(φ1)*math.Sin(δ)*math.Cos(θ))
	λ2 := λ1 + math.Atan2(math.Sin(θ)*math.Sin(δ)*math.Cos(φ1), math.Cos(δ)-math.Sin(φ1)*math.Sin(φ2))
	lon2 := math.Remainder(λ2*180/math.Pi, 360)
	return φ2 * 180 / math.Pi, lon2
}

// Circles must be found on every bearing, including where their box is
// awkward: near the poles and across the antimeridian.
func TestCircleAllBearings(t *testing.T) {
	centres := []struct{ lat, lon, radius float64 }{
		{52.52, 13.40, 100}, {0, 0, 5000}, {85, 10, 50_000}, {89.99, 0, 20_000},
		{-89.5, 40, 100_000}, {10, 179.9999, 1000}, {-30, -180, 2000}, {45, 90, 3_000_000},
	}
	q := fence.NewSearcher()
	for _, c := range centres {
		set := mustParse(t, fc(circleFeature("c", c.lat, c.lon, c.radius)))
		for brg := 0.0; brg < 360; brg += 7.5 {
			for _, tc := range []struct {
				factor float64
				want   int
			}{{0.99, 1}, {1.01, 0}} {
				lat, lon := destination(c.lat, c.lon, brg, c.radius*tc.factor)
				if got := len(q.Contains(set, lat, lon)); got != tc.want {
					t.Errorf("circle %+v, bearing %v, %v×radius (%v, %v): %d hits, want %d",
						c, brg, tc.factor, lat, lon, got, tc.want)
				}
			}
		}
	}
}

func TestParseFields(t *testing.T) {
	set := mustParse(t, fc(
		`{"type":"Feature","id":42,"properties":{"name":"Numeric","dwell":0},"geometry":{"type":"Polygon","coordinates":[`+square(1, 1, 1)+`]}}`,
		`{"type":"Feature","properties":{"id":"from-props","dwell":1.5},"geometry":{"type":"Polygon","coordinates":[[[0,0,30],[1,0,30],[1,1,30],[0,0,30]]]}}`,
		`{"type":"Feature","id":"same","properties":{"id":"same","radius":10},"geometry":{"type":"Point","coordinates":[0,0]}}`,
	))
	if got, want := ids(set.Fences()), []string{"42", "from-props", "same"}; !slices.Equal(got, want) {
		t.Fatalf("ids = %v, want %v", got, want)
	}
	if set.Len() != 3 {
		t.Errorf("Len = %d, want 3", set.Len())
	}
	if f := set.ByID("42"); f == nil || f.Name != "Numeric" || !f.HasDwell || f.Dwell != 0 {
		t.Errorf("ByID(42) = %+v, want name Numeric, dwell 0 enabled", f)
	}
	if f := set.ByID("from-props"); f == nil || !f.HasDwell || f.Dwell != 1500*time.Millisecond {
		t.Errorf("ByID(from-props) = %+v, want dwell 1.5s", f)
	}
	if f := set.ByID("same"); f == nil || f.HasDwell || f.Name != "" {
		t.Errorf("ByID(same) = %+v, want no dwell, no name", f)
	}
	if set.ByID("absent") != nil {
		t.Error("ByID(absent) != nil")
	}
	empty := mustParse(t, fc())
	if empty.Len() != 0 || len(empty.Fences()) != 0 || len(fence.NewSearcher().Contains(empty, 0, 0)) != 0 {
		t.Error("empty FeatureCollection is not an empty set")
	}
	for _, none := range []*fence.Set{nil, {}} { // not loaded yet
		if none.Len() != 0 || none.ByID("x") != nil || len(fence.NewSearcher().Contains(none, 0, 0)) != 0 {
			t.Errorf("%#v does not behave as empty", none)
		}
	}
}

func TestParseErrors(t *testing.T) {
	ok := polygonFeature("ok", square(13, 52, 0.01))
	poly := func(coords string) string {
		return `{"type":"Feature","id":"p","geometry":{"type":"Polygon","coordinates":` + coords + `}}`
	}
	withProps := func(props, geom string) string {
		return `{"type":"Feature","id":"p","properties":` + props + `,"geometry":` + geom + `}`
	}
	polyGeom := `{"type":"Polygon","coordinates":[` + square(13, 52, 0.01) + `]}`
	pointGeom := `{"type":"Point","coordinates":[13.4,52.5]}`
	tests := []struct {
		name string
		data string
		want error
		msg  string // substring of the error message
	}{
		{"not json", `{"type":`, fence.ErrNotFeatureCollection, "unexpected end"},
		{"json array", `[]`, fence.ErrNotFeatureCollection, "not a GeoJSON FeatureCollection"},
		{"wrong top type", `{"type":"Feature","features":[]}`, fence.ErrNotFeatureCollection, `"FeatureCollection"`},
		{"no features", `{"type":"FeatureCollection"}`, fence.ErrNotFeatureCollection, `"features" must be an array`},
		{"features not array", `{"type":"FeatureCollection","features":{}}`, fence.ErrNotFeatureCollection, `"features"`},
		{"feature not object", string(fc(ok, `17`)), fence.ErrInvalidFeature, "feature 1: feature is not a JSON object"},
		{"feature wrong type", string(fc(`{"type":"Geometry","id":"x","geometry":` + polyGeom + `}`)), fence.ErrInvalidFeature, `feature 0 (id "x"): "type" must be "Feature"`},
		{"properties not object", string(fc(withProps(`[]`, polyGeom))), fence.ErrInvalidFeature, `feature 0 (id "p"): properties is not a JSON object`},
		{"name not string", string(fc(withProps(`{"name":1}`, polyGeom))), fence.ErrInvalidFeature, `feature 0 (id "p"): properties.name must be a string`},
		{"missing id", string(fc(ok, `{"type":"Feature","geometry":`+polyGeom+`}`)), fence.ErrMissingID, "feature 1: feature has no"},
		{"null id", string(fc(`{"type":"Feature","id":null,"geometry":` + polyGeom + `}`)), fence.ErrMissingID, "feature 0:"},
		{"id bool", string(fc(`{"type":"Feature","id":true,"geometry":` + polyGeom + `}`)), fence.ErrInvalidID, "id must be a string or number"},
		{"properties.id number", string(fc(`{"type":"Feature","properties":{"id":7},"geometry":` + polyGeom + `}`)), fence.ErrInvalidID, "properties.id must be a string"},
		{"ids differ", string(fc(`{"type":"Feature","id":"a","properties":{"id":"b"},"geometry":` + polyGeom + `}`)), fence.ErrInvalidID, `differ`},
		{"empty id", string(fc(polygonFeature("", square(13, 52, 0.01)))), fence.ErrInvalidID, "id is empty"},
		{"id with slash", string(fc(polygonFeature("a/b", square(13, 52, 0.01)))), fence.ErrInvalidID, `feature 0 (id "a/b"): id must not contain`},
		{"id with plus", string(fc(polygonFeature("a+", square(13, 52, 0.01)))), fence.ErrInvalidID, "must not contain"},
		{"id with hash", string(fc(polygonFeature("#", square(13, 52, 0.01)))), fence.ErrInvalidID, "must not contain"},
		{"id with NUL", string(fc(`{"type":"Feature","id":"a\u0000b","geometry":` + polyGeom + `}`)), fence.ErrInvalidID, "NUL"},
		{"id starts with $", string(fc(polygonFeature("$SYS", square(13, 52, 0.01)))), fence.ErrInvalidID, "must not start with '$'"},
		{"id too long", string(fc(polygonFeature(strings.Repeat("x", 129), square(13, 52, 0.01)))), fence.ErrInvalidID, "129 bytes, at most 128"},
		{"duplicate id", string(fc(ok, polygonFeature("x", square(0, 0, 1)), ok)), fence.ErrDuplicateID, `feature 2 (id "ok"): duplicate id, first used by feature 0`},
		{"duplicate numeric id", string(fc(polygonFeature("7", square(0, 0, 1)), `{"type":"Feature","id":7,"geometry":`+polyGeom+`}`)), fence.ErrDuplicateID, `feature 1 (id "7")`},
		{"missing geometry", string(fc(`{"type":"Feature","id":"g"}`)), fence.ErrUnsupportedGeometry, `feature 0 (id "g"): feature has no geometry`},
		{"null geometry", string(fc(withProps(`{}`, `null`))), fence.ErrUnsupportedGeometry, "no geometry"},
		{"linestring", string(fc(withProps(`{}`, `{"type":"LineString","coordinates":[[0,0],[1,1]]}`))), fence.ErrUnsupportedGeometry, `geometry type "LineString" is not supported`},
		{"geometry collection", string(fc(withProps(`{}`, `{"type":"GeometryCollection","geometries":[]}`))), fence.ErrUnsupportedGeometry, "not supported"},
		{"point without radius", string(fc(withProps(`{}`, pointGeom))), fence.ErrUnsupportedGeometry, "Point geometry needs properties.radius"},
		{"latitude out of range", string(fc(poly(`[[[13,52],[13,95],[14,52],[13,52]]]`))), fence.ErrInvalidCoordinates, "polygon ring 0 position 1 has latitude 95"},
		{"longitude out of range", string(fc(poly(`[[[13,52],[200,52],[14,53],[13,52]]]`))), fence.ErrInvalidCoordinates, "longitude 200"},
		{"position too short", string(fc(poly(`[[[13,52],[13],[14,53],[13,52]]]`))), fence.ErrInvalidCoordinates, "position 1 has 1 numbers"},
		{"string coordinate", string(fc(poly(`[[[13,52],["13",52],[14,53],[13,52]]]`))), fence.ErrInvalidCoordinates, "polygon coordinates"},
		{"null coordinate", string(fc(poly(`[[[13,52],[null,52],[14,53],[13,52]]]`))), fence.ErrInvalidCoordinates, "null"},
		{"wrong nesting", string(fc(poly(`[[13,52],[14,52],[14,53],[13,52]]`))), fence.ErrInvalidCoordinates, "polygon coordinates"},
		{"no coordinates", string(fc(withProps(`{}`, `{"type":"Polygon"}`))), fence.ErrInvalidCoordinates, "Polygon has no coordinates"},
		{"point out of range", string(fc(withProps(`{"radius":5}`, `{"type":"Point","coordinates":[13,-91]}`))), fence.ErrInvalidCoordinates, "point has latitude -91"},
		{"ring too short", string(fc(ok, polygonFeature("b", square(0, 0, 1)), polygonFeature("c", square(2, 0, 1)),
			`{"type":"Feature","id":"depot-7","geometry":{"type":"Polygon","coordinates":[[[13,52],[14,52],[13,52]]]}}`)),
			fence.ErrInvalidRing, `feature 3 (id "depot-7"): polygon ring 0 has 3 positions, need at least 4`},
		{"hole too short", string(fc(poly(`[` + square(13, 52, 1) + `,[[13,52],[13.1,52],[13,52]]]`))), fence.ErrInvalidRing, "polygon ring 1 has 3 positions"},
		{"ring not closed", string(fc(poly(`[[[13,52],[14,52],[14,53],[13,53]]]`))), fence.ErrInvalidRing, "polygon ring 0 is not closed"},
		{"polygon without rings", string(fc(poly(`[]`))), fence.ErrInvalidRing, "polygon has no rings"},
		{"multipolygon part bad", string(fc(withProps(`{}`, `{"type":"MultiPolygon","coordinates":[[`+square(0, 0, 1)+`],[[[0,0],[1,1],[0,0]]]]}`))), fence.ErrInvalidRing, "polygon 1 ring 0 has 3 positions"},
		{"empty multipolygon", string(fc(withProps(`{}`, `{"type":"MultiPolygon","coordinates":[]}`))), fence.ErrInvalidRing, "multipolygon has no polygons"},
		{"radius zero", string(fc(withProps(`{"radius":0}`, pointGeom))), fence.ErrInvalidRadius, "radius must be a number of metres > 0, got 0"},
		{"radius negative", string(fc(withProps(`{"radius":-5}`, pointGeom))), fence.ErrInvalidRadius, "got -5"},
		{"radius string", string(fc(withProps(`{"radius":"100"}`, pointGeom))), fence.ErrInvalidRadius, `got "100"`},
		{"radius overflow", string(fc(withProps(`{"radius":1e400}`, pointGeom))), fence.ErrInvalidRadius, "got 1e400"},
		{"radius beyond the globe", string(fc(withProps(`{"radius":1e12}`, pointGeom))), fence.ErrInvalidRadius, "at most 20000000 metres (20000 km: half the Earth's circumference), got 1e12"},
		{"radius just beyond the bound", string(fc(withProps(`{"radius":20000000.5}`, pointGeom))), fence.ErrInvalidRadius, "got 20000000.5"},
		{"radius on polygon", string(fc(withProps(`{"radius":100}`, polyGeom))), fence.ErrInvalidRadius, "only allowed with Point"},
		{"dwell negative", string(fc(withProps(`{"dwell":-1}`, polyGeom))), fence.ErrInvalidDwell, `feature 0 (id "p"): properties.dwell must be a number of seconds >= 0, got -1`},
		{"dwell string", string(fc(withProps(`{"dwell":"60"}`, polyGeom))), fence.ErrInvalidDwell, `got "60"`},
		{"dwell overflows duration", string(fc(withProps(`{"dwell":1e300}`, polyGeom))), fence.ErrInvalidDwell, "got 1e300"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := fence.Parse([]byte(tt.data))
			if err == nil {
				t.Fatalf("Parse succeeded with %d fences, want error", s.Len())
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("errors.Is(%q, %v) = false", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not contain %q", err, tt.msg)
			}
			var fe *fence.FeatureError
			if isFeature := errors.As(err, &fe); isFeature == errors.Is(err, fence.ErrNotFeatureCollection) {
				t.Errorf("error %q: FeatureError = %v, but envelope errors have none and feature errors must have one", err, isFeature)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	_, err := fence.Load("testdata/does-not-exist.geojson")
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "load fences testdata/does-not-exist.geojson: ") {
		t.Errorf("Load(missing) = %v, want wrapped fs.ErrNotExist", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.geojson")
	if err := os.WriteFile(bad, fc(`{"type":"Feature","id":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = fence.Load(bad)
	if !errors.Is(err, fence.ErrUnsupportedGeometry) || !strings.Contains(err.Error(), "load fences "+bad+`: feature 0 (id "x")`) {
		t.Errorf("Load(bad) = %v", err)
	}
}

func TestBundledFences(t *testing.T) {
	set, err := fence.Load("../../fences.geojson")
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []string{"customer-alex", "depot-mitte", "parking-tegel", "zone-museumsinsel", "zone-tiergarten"}
	if got := ids(set.Fences()); !slices.Equal(got, wantIDs) {
		t.Errorf("fences = %v, want %v", got, wantIDs)
	}
	if d := set.ByID("depot-mitte"); d == nil || !d.HasDwell || d.Dwell != 120*time.Second {
		t.Errorf("depot-mitte = %+v, want dwell 120s", d)
	}
	tests := []struct {
		name     string
		lat, lon float64
		want     []string
	}{
		{"README point", 52.52, 13.40, []string{"zone-museumsinsel"}},
		{"README point outside", 52.50, 13.30, nil},
		{"depot yard", 52.5345, 13.3720, []string{"depot-mitte"}},
		{"depot building (hole)", 52.5355, 13.3707, nil},
		{"parking P1", 52.5572, 13.2915, []string{"parking-tegel"}},
		{"parking P2", 52.5537, 13.2967, []string{"parking-tegel"}},
		{"between parking lots", 52.5555, 13.2940, nil},
		{"Alexanderplatz", 52.5219, 13.4132, []string{"customer-alex"}},
		{"100 m north of Alexanderplatz", 52.5219 + 100/metresPerDegree, 13.4132, []string{"customer-alex"}},
		{"200 m north of Alexanderplatz", 52.5219 + 200/metresPerDegree, 13.4132, nil},
		{"Siegessäule", 52.5145, 13.3501, []string{"zone-tiergarten"}},
	}
	q := fence.NewSearcher()
	for _, tt := range tests {
		if got := ids(q.Contains(set, tt.lat, tt.lon)); !slices.Equal(got, append([]string{}, tt.want...)) {
			t.Errorf("%s (%v, %v): got %v, want %v", tt.name, tt.lat, tt.lon, got, tt.want)
		}
	}
}

func TestSearcherAllocs(t *testing.T) {
	set := mustParse(t, fc(
		polygonFeature("b", square(13, 52, 0.1)),
		polygonFeature("a", square(13.05, 52, 0.1)),
		circleFeature("c", 52, 13.02, 5000),
	))
	q := fence.NewSearcher()
	for _, p := range [][2]float64{{52, 13}, {52, 13.02}, {0, 0}} {
		if n := testing.AllocsPerRun(100, func() { q.Contains(set, p[0], p[1]) }); n != 0 {
			t.Errorf("Contains(%v) allocates %v times per call", p, n)
		}
	}
	var zero fence.Searcher // zero value works too, after its first call
	zero.Contains(set, 52, 13)
	if n := testing.AllocsPerRun(100, func() { zero.Contains(set, 52, 13.02) }); n != 0 {
		t.Errorf("zero Searcher allocates %v times per call", n)
	}
}

// Readers must always see one whole snapshot while a writer swaps Sets.
func TestConcurrentSwap(t *testing.T) {
	setA := mustParse(t, fc(polygonFeature("a", square(13, 52, 0.1))))
	setB := mustParse(t, fc(polygonFeature("b2", square(13, 52, 0.1)), circleFeature("b1", 52, 13, 1000)))
	var current atomic.Pointer[fence.Set]
	current.Store(setA)

	stop := make(chan struct{})
	var swapper sync.WaitGroup
	swapper.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			current.Store([]*fence.Set{setA, setB}[i%2])
		}
	})
	var readers sync.WaitGroup
	for range 4 {
		readers.Go(func() {
			q := fence.NewSearcher()
			for range 2000 {
				s := current.Load()
				got := ids(q.Contains(s, 52, 13))
				want := []string{"a"}
				if s == setB {
					want = []string{"b1", "b2"}
				}
				if !slices.Equal(got, want) {
					t.Errorf("got %v, want %v", got, want)
					return
				}
			}
		})
	}
	readers.Wait()
	close(stop)
	swapper.Wait()
}
