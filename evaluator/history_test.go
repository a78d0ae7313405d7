package evaluator

import (
	"slices"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/reorder"
)

// A backlog flushed newest-first, one ping a second, by a tracker whose
// clock stepped back 2.5 s during the outage: its stamps rise once where
// they should fall. mendBursts moves the part older than the step before
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
	p := newHarness(t, nil).proc
	d := p.device("d")
	const s = time.Second

	// True times 9, 8, 7, 6, 5 (newest first); the step back came between
	// 6 and 7: the pings fixed at 7, 8, 9 read 2.5 s early.
	stepped := burst(9*s-2500*time.Millisecond, 8*s-2500*time.Millisecond, 7*s-2500*time.Millisecond, 6*s, 5*s)
	p.mendBursts(d, stepped)
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
		p.mendBursts(d, tc.b)
		if !slices.Equal(before, tc.b) {
			t.Errorf("%s: moved %v to %v", tc.name, before, tc.b)
		}
	}
}
