package fence_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/edgefence/edgefence/evaluator/fence"
	"pgregory.net/rapid"
)

// Distances to the edges of a square with a hole, a two-part multipolygon
// and a circle, against distances worked out by hand (metres, within
// the planar approximation's 0.5 %).
func TestEdgeDistance(t *testing.T) {
	const lat0, lon0 = 52.5, 13.4
	kx := metresPerDegree * math.Cos(lat0*math.Pi/180)
	set, err := fence.Parse(fc(
		polygonFeature("holed", square(lon0, lat0, 0.01), square(lon0, lat0, 0.002)),
		`{"type":"Feature","id":"multi","geometry":{"type":"MultiPolygon","coordinates":[[`+square(lon0+1, lat0, 0.001)+`],[`+square(lon0+1.01, lat0, 0.001)+`]]}}`,
		circleFeature("circle", lat0, lon0+2, 150),
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fence    string
		lat, lon float64
		want     float64
	}{
		{"holed", lat0, lon0 + 0.005, 0.003 * kx},              // between the hole's edge and the outer one, east
		{"holed", lat0 + 0.006, lon0, 0.004 * metresPerDegree}, // north: 0.004° to the hole, 0.004° to the outside
		{"holed", lat0, lon0, 0.002 * kx},                      // in the hole: its edge
		{"holed", lat0 + 0.01, lon0, 0},                        // on the outer edge
		{"holed", lat0 + 0.011, lon0, 0.001 * metresPerDegree},
		{"multi", lat0, lon0 + 1.005, 0.004 * kx}, // between the parts: the nearer one
		{"circle", lat0, lon0 + 2, 150},           // centre
		{"circle", lat0 + 100/metresPerDegree, lon0 + 2, 50},
		{"circle", lat0 + 200/metresPerDegree, lon0 + 2, 50},
	} {
		got := set.ByID(c.fence).EdgeDistance(c.lat, c.lon)
		if math.Abs(got-c.want) > 0.005*c.want+0.01 {
			t.Errorf("%s: distance from (%g, %g) = %.3f m, want %.3f", c.fence, c.lat, c.lon, got, c.want)
		}
	}
}

// A point on any edge of a polygon is no further from it than rounding,
// and a point moved off it perpendicularly by d metres is d from it (as
// long as no other edge is nearer).
func TestPropertyPointOnEdgeIsAtDistanceZero(t *testing.T) {
	set, err := fence.Parse(fc(polygonFeature("tri", "[[13.40,52.50],[13.42,52.50],[13.41,52.515],[13.40,52.50]]")))
	if err != nil {
		t.Fatal(err)
	}
	f := set.ByID("tri")
	corners := [][2]float64{{13.40, 52.50}, {13.42, 52.50}, {13.41, 52.515}}
	rapid.Check(t, func(t *rapid.T) {
		i := rapid.IntRange(0, 2).Draw(t, "edge")
		a, b := corners[i], corners[(i+1)%3]
		s := rapid.Float64Range(0, 1).Draw(t, "along")
		lon, lat := a[0]+s*(b[0]-a[0]), a[1]+s*(b[1]-a[1])
		if d := f.EdgeDistance(lat, lon); d > 1e-6 {
			t.Fatalf("point on edge %d at %g: distance %g m", i, s, d)
		}
	})
}

// max_accuracy is a per-fence number of metres >= 0.
func TestMaxAccuracyProperty(t *testing.T) {
	set, err := fence.Parse(fc(`{"type":"Feature","id":"a","properties":{"max_accuracy":25},"geometry":{"type":"Polygon","coordinates":[` + square(13.4, 52.5, 0.01) + `]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if f := set.ByID("a"); !f.HasMaxAccuracy || f.MaxAccuracy != 25 {
		t.Fatalf("max_accuracy = %v (%v), want 25", f.MaxAccuracy, f.HasMaxAccuracy)
	}
	for _, bad := range []string{`-1`, `"25"`, `true`} {
		_, err := fence.Parse(fc(`{"type":"Feature","id":"a","properties":{"max_accuracy":` + bad + `},"geometry":{"type":"Polygon","coordinates":[` + square(13.4, 52.5, 0.01) + `]}}`))
		if !errors.Is(err, fence.ErrInvalidAccuracy) {
			t.Errorf("max_accuracy %s: %v, want ErrInvalidAccuracy", bad, err)
		}
	}
}

// accuracy_margin is a fence's own margin: a fix 30 m into it with an
// accuracy of 10 m enters at the engine's margin of 2 but not at the
// fence's 4, and leaves it only when more than 40 m out; the other fence is judged
// at the engine's margin still. Bad values are refused by name.
func TestAccuracyMarginProperty(t *testing.T) {
	const lat0, lon0 = 52.5, 13.4
	kx := metresPerDegree * math.Cos(lat0*math.Pi/180)
	bay := `{"type":"Feature","id":"bay","properties":{"accuracy_margin":4},"geometry":{"type":"Polygon","coordinates":[` + square(lon0, lat0, 0.01) + `]}}`
	set, err := fence.Parse(fc(bay, polygonFeature("yard", square(lon0+0.02, lat0, 0.01))))
	if err != nil {
		t.Fatal(err)
	}
	q := fence.NewSearcher()
	bayF, yard := set.ByID("bay"), set.ByID("yard")
	if !bayF.HasMargin || bayF.Margin != 4 || yard.HasMargin {
		t.Fatalf("margins: bay %v (%v), yard has one: %v", bayF.Margin, bayF.HasMargin, yard.HasMargin)
	}
	settle := func(metres float64, before []*fence.Fence) int {
		lon := lon0 + 0.01 + metres/kx // east of the shared edge
		return len(fence.Settle(nil, q.Contains(set, lat0, lon), before, lat0, lon, 10, 2, 100))
	}
	if n := settle(-30, nil); n != 0 {
		t.Errorf("30 m into the bay at ±10 m from outside: in %d fences, want none (its margin is 4)", n)
	}
	if n := settle(-45, nil); n != 1 {
		t.Errorf("45 m into the bay at ±10 m from outside: in %d fences, want the bay", n)
	}
	if n := settle(30, nil); n != 1 {
		t.Errorf("30 m into the yard at ±10 m from outside: in %d fences, want the yard (the engine's margin of 2)", n)
	}
	if n := settle(35, []*fence.Fence{bayF}); n != 2 {
		t.Errorf("35 m out of the bay into the yard: in %d fences, want both (the bay held)", n)
	}
	if n := settle(45, []*fence.Fence{bayF}); n != 1 {
		t.Errorf("45 m out of the bay into the yard: in %d fences, want the yard", n)
	}
	for _, bad := range []string{`-1`, `"4"`, `11`} {
		_, err := fence.Parse(fc(`{"type":"Feature","id":"a","properties":{"accuracy_margin":` + bad + `},"geometry":{"type":"Polygon","coordinates":[` + square(lon0, lat0, 0.01) + `]}}`))
		if !errors.Is(err, fence.ErrInvalidMargin) {
			t.Errorf("accuracy_margin %s: %v, want ErrInvalidMargin", bad, err)
		}
	}
}

// properties.confirm false makes one clear fix enough in that fence
// (fence.Hold); anything but true or false rejects the file.
func TestConfirmProperty(t *testing.T) {
	const lat0, lon0 = 52.5, 13.4
	parse := func(props string) (*fence.Fence, error) {
		set, err := fence.Parse(fc(`{"type":"Feature","id":"a","properties":{` + props + `},"geometry":{"type":"Polygon","coordinates":[` + square(lon0, lat0, 0.01) + `]}}`))
		if err != nil {
			return nil, err
		}
		return set.ByID("a"), nil
	}
	for props, single := range map[string]bool{``: false, `"confirm":true`: false, `"confirm":false`: true} {
		f, err := parse(props)
		if err != nil || f.Single != single {
			t.Errorf("{%s}: Single %v (%v), want %v", props, f != nil && f.Single, err, single)
		}
	}
	for _, bad := range []string{`"false"`, `0`, `"yes"`} {
		if _, err := parse(`"confirm":` + bad); !errors.Is(err, fence.ErrInvalidConfirm) {
			t.Errorf("confirm %s: %v, want ErrInvalidConfirm", bad, err)
		}
	}
	// A fix 550 m inside (the square is 0.01° either side of its centre)
	// after one 55 m outside: refused unless the fence asks for no
	// confirmation.
	pr := fence.Prior{Prev: true, PLat: lat0 - 0.0105, PLon: lon0}
	for props, want := range map[string]int{``: 0, `"confirm":false`: 1} {
		f, _ := parse(props)
		if got := len(fence.Hold(nil, []*fence.Fence{f}, nil, lat0-0.005, lon0, 5, 1.5, 100, &pr)); got != want {
			t.Errorf("{%s}: in %d fences after an unconfirmed clear fix, want %d", props, got, want)
		}
	}
}

// Settle keeps a device's membership in a fence whose edge the fix's
// accuracy straddles, and takes the position alone for a fix without
// accuracy or less accurate than the cap.
func TestSettle(t *testing.T) {
	const lat0, lon0 = 52.5, 13.4
	kx := metresPerDegree * math.Cos(lat0*math.Pi/180)
	set, err := fence.Parse(fc(polygonFeature("a", square(lon0, lat0, 0.01)), polygonFeature("b", square(lon0+0.02, lat0, 0.01))))
	if err != nil {
		t.Fatal(err)
	}
	q := fence.NewSearcher()
	a, b := set.ByID("a"), set.ByID("b")
	ids := func(fs []*fence.Fence) (s []string) {
		for _, f := range fs {
			s = append(s, f.ID)
		}
		return s
	}
	edge := lon0 + 0.01 // a's east edge, b's west edge
	for _, c := range []struct {
		name   string
		metres float64 // east of the shared edge
		acc    float64
		before []*fence.Fence
		want   string
	}{
		{"in b by 10 m ±20 m, was in a: stays in a", 10, 20, []*fence.Fence{a}, "[a]"},
		{"in b by 30 m ±20 m, was in a: moves", 30, 20, []*fence.Fence{a}, "[b]"},
		{"in a by 10 m ±20 m, was in a and b: stays in both", -10, 20, []*fence.Fence{a, b}, "[a b]"},
		{"no accuracy: position alone", 10, 0, []*fence.Fence{a}, "[b]"},
		{"over the cap: position alone", 10, 150, []*fence.Fence{a}, "[b]"},
	} {
		lon := edge + c.metres/kx
		got := fence.Settle(nil, q.Contains(set, lat0, lon), c.before, lat0, lon, c.acc, 1, 100)
		if s := "[" + strings.Join(ids(got), " ") + "]"; s != c.want {
			t.Errorf("%s: %s, want %s", c.name, s, c.want)
		}
	}
	// The margin scales the accuracy: in b by 30 m ±20 m moves at 1, not at 2.
	for _, c := range []struct {
		margin float64
		want   string
	}{{1, "[b]"}, {1.4, "[b]"}, {1.6, "[a]"}, {2, "[a]"}, {0, "[b]"}} {
		lon := edge + 30/kx
		got := fence.Settle(nil, q.Contains(set, lat0, lon), []*fence.Fence{a}, lat0, lon, 20, c.margin, 100)
		if s := "[" + strings.Join(ids(got), " ") + "]"; s != c.want {
			t.Errorf("margin %v: %s, want %s", c.margin, s, c.want)
		}
	}
}

// A fence smaller than a fix's error circle can still be entered and
// left: the margin never asks a fix to be deeper inside (or farther
// outside) than three quarters of the fence's own depth. Without the cap a
// 30 m wide depot bay never saw an ENTER from a phone reporting ±20 m.
func TestSettleSmallFence(t *testing.T) {
	const lat0, lon0 = 52.5, 13.4
	kx := metresPerDegree * math.Cos(lat0*math.Pi/180)
	strip := func(lon, lat float64) string { // 1 km long, 4 m wide
		w, h := 1000/kx, 4/metresPerDegree
		return fmt.Sprintf("[[%g,%g],[%g,%g],[%g,%g],[%g,%g],[%g,%g]]", lon, lat, lon+w, lat, lon+w, lat+h, lon, lat+h, lon, lat)
	}
	set, err := fence.Parse(fc(
		polygonFeature("bay", square(lon0, lat0, 15/kx)), // 30 m wide
		circleFeature("pad", lat0, lon0+0.01, 30),
		polygonFeature("strip", strip(lon0+0.02, lat0)),
	))
	if err != nil {
		t.Fatal(err)
	}
	q := fence.NewSearcher()
	for _, c := range []struct {
		name     string
		lat, lon float64
		want     string
	}{
		{"the bay's centre", lat0, lon0, "[bay]"},
		{"the pad's centre", lat0, lon0 + 0.01, "[pad]"},
		{"the strip's middle line", lat0 + 2/metresPerDegree, lon0 + 0.02 + 500/kx, "[strip]"},
	} {
		for _, margin := range []float64{1, 2, 3} {
			hits := slices.Clone(q.Contains(set, c.lat, c.lon)) // the searcher reuses its result
			got := fence.Settle(nil, hits, nil, c.lat, c.lon, 20, margin, 100)
			var ids []string
			for _, f := range got {
				ids = append(ids, f.ID)
			}
			if s := fmt.Sprint(ids); s != c.want {
				t.Errorf("%s ±20 m, margin %v: in %s, want %s", c.name, margin, s, c.want)
			}
			// And out again, 100 m south: beyond ¾ of any of these
			// fences' depth, though not beyond margin × 20 m for 3.
			lat := c.lat - 100/metresPerDegree
			if out := fence.Settle(nil, q.Contains(set, lat, c.lon), hits, lat, c.lon, 20, margin, 100); len(out) != 0 && margin < 3 {
				t.Errorf("%s: 100 m out ±20 m, margin %v: still in %d fences", c.name, margin, len(out))
			}
		}
	}
}
