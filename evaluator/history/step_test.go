package history

import (
	"cmp"
	"slices"
	"testing"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/reorder"
	"pgregory.net/rapid"
)

func heldGen() *rapid.Generator[reorder.Held] {
	return rapid.Custom(func(t *rapid.T) reorder.Held {
		return reorder.Held{
			Event:   rapid.Int64Range(0, 20e9).Draw(t, "event"),
			Wall:    rapid.Int64Range(0, 20e9).Draw(t, "wall"),
			Arrived: rapid.Int64Range(0, 20e9).Draw(t, "arrived"),
			Clamp:   clock.ClampReason(rapid.IntRange(0, 2).Draw(t, "clamp")),
		}
	})
}

// A batch placed while a step back may be beginning sets its possible
// step pings aside and takes them back later: none is lost or changed on
// the way, the ones set aside are exactly those that may begin a step,
// and the batch's arrival span is theirs again.
func TestPropertyStepPingsWaitAndComeBackWhole(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		pings := rapid.SliceOfN(heldGen(), 1, 20).Draw(t, "pings")
		now := rapid.Int64Range(0, 20e9).Draw(t, "now")
		wait, off, tol := int64(2e9), rapid.Int64Range(-5e9, 5e9).Draw(t, "off"), int64(1e9)
		b := &Batch{Pings: slices.Clone(pings)}
		kept := b.TakeStepPings(nil, now, wait, off, tol)
		if len(kept)+len(b.Pings) != len(pings) {
			t.Fatalf("%d set aside + %d left of %d", len(kept), len(b.Pings), len(pings))
		}
		mayStep := func(p reorder.Held) bool {
			behind := off - (p.Event - p.Wall)
			return p.Clamp == clock.ClampNone && now-p.Arrived < wait && behind > tol && behind < clock.BacklogAge
		}
		for _, p := range kept {
			if !mayStep(p) {
				t.Fatalf("set aside %+v, which cannot begin a step", p)
			}
		}
		for _, p := range b.Pings {
			if mayStep(p) {
				t.Fatalf("left %+v, which may begin a step", p)
			}
		}
		whole := append(slices.Clone(b.Pings), kept...)
		// A total order on what is compared: pings that tie in event
		// order (Less) may come back in either order.
		less := func(a, b reorder.Held) int {
			return cmp.Or(cmp.Compare(a.Event, b.Event), cmp.Compare(a.Wall, b.Wall),
				cmp.Compare(a.Arrived, b.Arrived), cmp.Compare(a.Clamp, b.Clamp))
		}
		slices.SortFunc(whole, less)
		want := slices.Clone(pings)
		slices.SortFunc(want, less)
		for i := range want {
			if want[i].Event != whole[i].Event || want[i].Wall != whole[i].Wall || want[i].Arrived != whole[i].Arrived || want[i].Clamp != whole[i].Clamp {
				t.Fatalf("pings changed on the way: %+v, want %+v", whole, want)
			}
		}
		if len(kept) == 0 {
			return
		}
		b.Refill(kept)
		first, last := kept[0].Arrived, kept[0].Arrived
		for _, p := range kept {
			first, last = min(first, p.Arrived), max(last, p.Arrived)
		}
		if len(b.Pings) != len(kept) || b.First != first || b.Last != last {
			t.Fatalf("refilled %d pings over [%d, %d], want %d over [%d, %d]", len(b.Pings), b.First, b.Last, len(kept), first, last)
		}
	})
}

// Place sorts a batch and splits it around the committed points: before
// the oldest, between, at or after the newest.
func TestPropertyPlaceSplitsAroundTheHistory(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var h History
		for _, e := range rapid.SliceOfN(rapid.Int64Range(0, 20e9), 0, 5).Draw(t, "points") {
			h.Points = append(h.Points, Point{Event: e})
		}
		slices.SortFunc(h.Points, func(a, b Point) int { return cmp.Compare(a.Event, b.Event) })
		pings := rapid.SliceOfN(heldGen(), 0, 20).Draw(t, "pings")
		first, after := h.Place(pings)
		if !slices.IsSortedFunc(pings, func(a, b reorder.Held) int { return cmp.Compare(a.Event, b.Event) }) {
			t.Fatalf("not sorted by event: %+v", pings)
		}
		if first < 0 || first > after || after > len(pings) {
			t.Fatalf("first %d, after %d of %d", first, after, len(pings))
		}
		for i, p := range pings {
			var want int // 0 before, 1 between, 2 after
			switch n := len(h.Points); {
			case n > 0 && p.Event >= h.Points[n-1].Event:
				want = 2
			case n == 0 || p.Event < h.Points[0].Event:
				want = 0
			default:
				want = 1
			}
			got := 1
			if i < first {
				got = 0
			} else if i >= after {
				got = 2
			}
			if got != want {
				t.Fatalf("ping %d at %d falls in part %d, want %d (points %+v)", i, p.Event, got, want, h.Points)
			}
		}
	})
}
