package reorder

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// The deadline queue pops deadlines in ascending order whatever order they
// are pushed in (mostly ascending, sometimes not), like a plain min-heap.
func TestDeadlinesPopInOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q Deadlines[*int]
		var ref []int64
		clock := int64(0)
		for range rapid.IntRange(0, 400).Draw(t, "ops") {
			if rapid.IntRange(0, 2).Draw(t, "op") > 0 || len(ref) == 0 {
				// Mostly ascending, like arrivals plus one hold; sometimes
				// earlier, like a per-device hold or a preempted client.
				clock += rapid.Int64Range(0, 5).Draw(t, "step")
				at := clock
				if rapid.IntRange(0, 9).Draw(t, "late") == 0 {
					at -= rapid.Int64Range(1, 20).Draw(t, "back")
				}
				q.Push(at, nil)
				ref = append(ref, at)
				continue
			}
			slices.Sort(ref)
			if got := q.Next(); got != ref[0] {
				t.Fatalf("next = %d, want %d", got, ref[0])
			}
			if got := q.Pop().At; got != ref[0] {
				t.Fatalf("pop = %d, want %d", got, ref[0])
			}
			ref = ref[1:]
			if q.Len() != len(ref) {
				t.Fatalf("len = %d, want %d", q.Len(), len(ref))
			}
		}
	})
}
