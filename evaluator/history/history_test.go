package history

import (
	"math"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/edgefence/edgefence/evaluator/reorder"
	"pgregory.net/rapid"
)

// A backlog flushed newest-first, one ping a second, by a tracker whose
// clock stepped back 2.5 s during the outage: its stamps rise once where
// they should fall. MendBursts moves the part older than the step before
// the rest; a burst without a step, or with a step forward (a gap), is
// left alone.
func TestMendBurstsUndoesAStepBackInsideABacklog(t *testing.T) {
	burst := func(stamps ...time.Duration) []reorder.Held {
		out := make([]reorder.Held, len(stamps))
		for i, s := range stamps {
			// Fixed a minute ago or more, arriving 1 ms apart: a backlog.
			out[i] = reorder.Held{Event: int64(s), Wall: int64(10*time.Minute) + int64(i)*1e6, Arrived: int64(10*time.Minute) + int64(i)*1e6}
		}
		return out
	}
	order := func(h []reorder.Held) []int {
		idx := make([]int, len(h))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int { return int(h[a].Event - h[b].Event) })
		return idx
	}
	const s = time.Second

	// True times 9, 8, 7, 6, 5 (newest first); the step back came between
	// 6 and 7: the pings fixed at 7, 8, 9 read 2.5 s early.
	stepped := burst(9*s-2500*time.Millisecond, 8*s-2500*time.Millisecond, 7*s-2500*time.Millisecond, 6*s, 5*s)
	MendBursts(stepped, nil, 0, nil)
	if got, want := order(stepped), []int{4, 3, 2, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("stepped burst in event order: %v, want %v (oldest last-arrived first)", got, want)
	}

	for _, tc := range []struct {
		name string
		b    []reorder.Held
	}{
		{"no step", burst(9*s, 8*s, 7*s, 6*s, 5*s)},
		{"irregular intervals", burst(9*s, 8500*time.Millisecond, 7*s, 6800*time.Millisecond, 5*s)},
		{"a step forward: a gap", burst(12*s, 11*s, 10*s, 6*s, 5*s)},
	} {
		before := slices.Clone(tc.b)
		MendBursts(tc.b, nil, 0, nil)
		if !slices.Equal(before, tc.b) {
			t.Errorf("%s: moved %v to %v", tc.name, before, tc.b)
		}
	}
}

// A history point keeps a position in fixed point, and the engine
// rounds every ping to it on ingest: a rounded position survives the
// point unchanged, so a committed ping evaluated again after a late one
// is placed before it sees exactly the position it was evaluated at live.
func TestPropertyHistoryPointKeepsTheRoundedPosition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lat := rapid.Float64Range(-90, 90).Draw(t, "lat")
		lon := rapid.Float64Range(-180, 180).Draw(t, "lon")
		qlat, qlon := Quantize(lat), Quantize(lon)
		pt := PointOf(1, 2, qlat, qlon, 0)
		if Degrees(pt.Lat) != qlat || Degrees(pt.Lon) != qlon {
			t.Fatalf("(%v, %v) rounded to (%v, %v), kept as (%v, %v)", lat, lon, qlat, qlon, Degrees(pt.Lat), Degrees(pt.Lon))
		}
		if Quantize(qlat) != qlat || Quantize(qlon) != qlon {
			t.Fatalf("rounding (%v, %v) again moved it", qlat, qlon)
		}
		if d := math.Abs(qlat - lat); d > 0.5/Scale*1.0000001 {
			t.Fatalf("lat %v rounded to %v: %g° off", lat, qlat, d)
		}
	})
}

// A point keeps the fences its settling held in what was padding: the
// history's memory per device stays as it was.
func TestPointSize(t *testing.T) {
	if n := unsafe.Sizeof(Point{}); n != 32 {
		t.Fatalf("a Point is %d bytes, want 32", n)
	}
}
