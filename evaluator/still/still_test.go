package still_test

import (
	"math"
	"testing"
	"unsafe"

	"pgregory.net/rapid"

	"github.com/edgefence/edgefence/evaluator/history"
	"github.com/edgefence/edgefence/evaluator/still"
)

const sec = int64(1_000_000_000)

// at returns the fixed-point position north and east metres from a
// point in Berlin.
func at(north, east float64) (int32, int32) {
	const lat, lon = 52.5, 13.4
	return history.Fixed(lat + north/111_320), history.Fixed(lon + east/(111_320*math.Cos(lat*math.Pi/180)))
}

// The spot's fixed point is the history's.
func TestScaleIsTheHistorys(t *testing.T) {
	if still.Scale != history.Scale {
		t.Fatalf("still.Scale %v, history.Scale %v", still.Scale, history.Scale)
	}
}

// A device stands still once its fixes have stayed near one spot for
// still.For, not before; two fixes in a row beyond the radius move the
// spot and start the time again, one alone (an outlier) does not.
func TestStandsAfterStayingNearOneSpot(t *testing.T) {
	var s still.Spot
	for i := int64(0); i <= 30; i++ {
		lat, lon := at(float64(i%3)*5, -float64(i%2)*5) // jitter of 5–7 m
		got := s.Observe(i*sec, lat, lon, 50)
		if want := i*sec >= still.For; got != want {
			t.Fatalf("fix %d s after the first: standing %v, want %v", i, got, want)
		}
	}
	lat, lon := at(40, 0) // 40 m off, beyond max(25 m, 2 × 5 m)
	if !s.Observe(31*sec, lat, lon, 50) {
		t.Fatal("one fix 40 m from the spot (an outlier): no longer standing")
	}
	if s.Observe(32*sec, lat, lon, 50) {
		t.Fatal("a second fix 40 m from the spot: still standing")
	}
	for i := int64(33); i <= 61; i++ {
		if s.Observe(i*sec, lat, lon, 50) {
			t.Fatalf("%d s after moving: standing already", i-32)
		}
	}
	if !s.Observe(62*sec, lat, lon, 50) {
		t.Fatal("30 s after moving, at the new spot: not standing")
	}
	back, lon0 := at(0, 0)
	s.Observe(63*sec, back, lon0, 50) // an outlier back at the old spot
	if !s.Observe(64*sec, lat, lon, 50) {
		t.Fatal("an outlier between fixes at the spot moved it")
	}
}

// The radius grows with the fix's accuracy: a receiver that reports 30 m
// keeps standing through a fix 50 m off.
func TestRadiusGrowsWithAccuracy(t *testing.T) {
	if r := still.Radius(0); r != still.MinRadius {
		t.Errorf("radius without accuracy %v, want %v", r, still.MinRadius)
	}
	if r := still.Radius(300); r != 120 {
		t.Errorf("radius at 30 m accuracy %v, want 120", r)
	}
	s := standing(300)
	lat, lon := at(50, 0)
	if !s.Observe(31*sec, lat, lon, 300) {
		t.Fatal("a fix 50 m off at ±30 m: no longer standing")
	}
}

// standing returns a spot that has seen a fix at the origin every second
// for 30 s, with an accuracy of acc decimetres: standing.
func standing(acc uint16) still.Spot {
	var s still.Spot
	lat, lon := at(0, 0)
	for i := int64(0); i <= 30; i++ {
		s.Observe(i*sec, lat, lon, acc)
	}
	return s
}

// After a silence longer than still.MaxGap a fix beyond the radius is a
// move, not an outlier; one near the spot finds the device still there.
func TestAfterASilenceAFarFixIsAMove(t *testing.T) {
	s := standing(50)
	lat, lon := at(0, 0)
	if !s.Observe(45*sec, lat, lon, 50) {
		t.Fatal("at its spot after 15 s of silence: not standing")
	}
	far, lon2 := at(100, 0)
	if s.Observe(60*sec, far, lon2, 50) {
		t.Fatal("a fix 100 m off after 15 s of silence taken for an outlier of a standing device")
	}
}

// A fix stamped before the spot's last starts it again: the device's
// timeline went back (a restored state, a clock step).
func TestAnEarlierFixStartsAgain(t *testing.T) {
	var s still.Spot
	lat, lon := at(0, 0)
	for i := int64(10); i <= 40; i++ {
		s.Observe(i*sec, lat, lon, 50)
	}
	if s.Observe(5*sec, lat, lon, 50) {
		t.Fatal("standing on a fix before the spot's first")
	}
}

// Whatever its fixes' jitter within the radius, a device that moves no
// more than that stands once For has passed, and stays standing: the
// spot's mean never wanders so far that a fix within the jitter leaves it.
func TestPropertyJitterWithinTheRadiusKeepsStanding(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		acc := uint16(rapid.IntRange(0, 500).Draw(t, "acc_dm"))
		// Jitter within half the radius of a fixed point: any two fixes
		// are within the radius of each other, so of any mean of them.
		r := still.Radius(acc) / 2
		var s still.Spot
		ev, first := int64(0), int64(-1)
		for i := range rapid.IntRange(1, 200).Draw(t, "fixes") {
			ev += int64(rapid.IntRange(100, 5000).Draw(t, "gap_ms")) * 1_000_000
			a := rapid.Float64Range(0, 2*math.Pi).Draw(t, "angle")
			d := rapid.Float64Range(0, r*0.99).Draw(t, "metres")
			lat, lon := at(d*math.Sin(a), d*math.Cos(a))
			got := s.Observe(ev, lat, lon, acc)
			if first < 0 {
				first = ev
			}
			if want := ev-first >= still.For; got != want || s.Since != first {
				t.Fatalf("fix %d at %d ms: standing %v since %d, want %v since the first", i, ev/1e6, got, s.Since, want)
			}
		}
	})
}

// A device's fixes that come back from near the edge of its radius
// (beyond still.ReturnFrom of it) to within half that distance grow its
// radius by a quarter, whether it has stood yet or not, and a new spot
// keeps it; fixes that only go farther (a walk) never do. The spot is 24 bytes, so the device
// record keeps its size class.
func TestRadiusGrowsWhenFixesComeBack(t *testing.T) {
	var s still.Spot
	ev := int64(0)
	obs := func(north float64) bool {
		lat, lon := at(north, 0)
		ev += sec
		return s.Observe(ev, lat, lon, 50) // acc 5 m: a radius of 25 m
	}
	for range 31 {
		obs(0)
	}
	obs(20) // 0.8 of the radius
	if obs(5); s.Grow() != 1 || s.Radius(50) != still.Radius(50)*5/4 {
		t.Fatalf("after a return from 20 m: grow %d, radius %v", s.Grow(), s.Radius(50))
	}
	obs(200) // two far fixes: a new spot…
	obs(200)
	if s.Grow() != 1 {
		t.Fatalf("a new spot lost the growth: %d", s.Grow())
	}

	// Before it has stood too: a receiver whose fixes leave a radius made
	// from its acc every few fixes never stands, and only a return before
	// then grows its radius until it does.
	var young still.Spot
	ev = 0
	for _, north := range []float64{0, 0, 20, 5} {
		lat, lon := at(north, 0)
		ev += sec
		young.Observe(ev, lat, lon, 50)
	}
	if young.Standing() || young.Grow() != 1 {
		t.Fatalf("a return from 20 m in the spot's first seconds: grow %d, standing %v", young.Grow(), young.Standing())
	}

	var walker still.Spot
	for i := range 120 { // 0.5 m/s, a fix a second
		lat, lon := at(float64(i)/2, 0)
		walker.Observe(int64(i)*sec, lat, lon, 50)
		if walker.Grow() != 0 {
			t.Fatalf("a walker's radius grew at %d s", i)
		}
	}
	if n := unsafe.Sizeof(still.Spot{}); n != 24 {
		t.Fatalf("Spot is %d bytes, want 24", n)
	}
}
