package presence

import (
	"slices"
	"testing"

	"github.com/edgefence/edgefence/evaluator/fence"
)

func fences(s States) []string {
	var out []string
	for _, st := range s {
		out = append(out, st.Fence)
	}
	return out
}

// States stay sorted by fence ID whatever order they are entered in,
// an outside state lingers for exactly the ping that left it, and a
// restored transition keeps the earlier ENTER and a DWELL once seen.
func TestStatesKeepOrderPruneAndRestore(t *testing.T) {
	var s States
	for _, id := range []string{"m", "c", "x", "a"} {
		s.Insert(State{Fence: id, Inside: true, Seq: 1})
	}
	if got, want := fences(s), []string{"a", "c", "m", "x"}; !slices.Equal(got, want) {
		t.Fatalf("inserted in any order: %v, want %v", got, want)
	}
	if i := s.Index("m"); i != 2 || s.Index("zz") != -1 {
		t.Fatalf("Index(m) = %d, Index(zz) = %d", i, s.Index("zz"))
	}

	s[1].Inside, s[1].Seq = false, 2 // left c at ping 2
	s[3].Inside = false              // left x before ping 2
	s.Prune(2)
	if got, want := fences(s), []string{"a", "c", "m"}; !slices.Equal(got, want) {
		t.Fatalf("after ping 2: %v, want c lingering and x gone", got)
	}
	if got := fences(s.Compact()); !slices.Equal(got, []string{"a", "m"}) {
		t.Fatalf("compacted: %v, want the inside ones", got)
	}
	a, m := &fence.Fence{ID: "a"}, &fence.Fence{ID: "m"}
	if !s.Same([]*fence.Fence{a, m}) || s.Same([]*fence.Fence{a}) || s.Same([]*fence.Fence{m}) {
		t.Fatalf("Same: want true only for exactly the fences inside (a, m)")
	}

	s.Restore("m", false, true, 50) // a DWELL restored after an ENTER at 0
	if st := s[s.Index("m")]; st.Enter != 0 || !st.Dwelled || !st.Inside {
		t.Fatalf("restored DWELL: %+v, want inside since 0, dwelled", st)
	}
	s.Restore("b", false, false, 70)
	if got := fences(s); !slices.Equal(got, []string{"a", "b", "c", "m"}) {
		t.Fatalf("restored ENTER: %v, want b in order", got)
	}
	s.Restore("a", true, false, 80)
	if s.Index("a") != -1 || !s.Inside() {
		t.Fatalf("restored EXIT of a: %v", s)
	}
}

// Dues come out in event-time order.
func TestSortDues(t *testing.T) {
	d := []Due{{I: 0, At: 30}, {I: 1, At: 10}, {I: 2, At: 20}}
	SortDues(d)
	if d[0].At != 10 || d[1].At != 20 || d[2].At != 30 {
		t.Fatalf("sorted: %v", d)
	}
}

// DWELLs owed apart are kept per device in the order owed, and a device
// whose last one is settled leaves the map.
func TestOwingSettle(t *testing.T) {
	var w Owing[string]
	w.Settle("a", func(Owed) bool { return true }) // nothing owed: nothing to do
	w.Add("a", Owed{Fence: "zone", Enter: 1, At: 4})
	w.Add("a", Owed{Fence: "yard", Enter: 2, At: 5})
	w.Add("b", Owed{Fence: "zone", Enter: 3, At: 6})
	w.Settle("a", func(o Owed) bool { return o.Fence == "zone" })
	if got := w["a"]; len(got) != 1 || got[0].Fence != "yard" {
		t.Fatalf("a owes %+v, want the yard's", got)
	}
	w.Settle("a", func(Owed) bool { return true })
	if _, ok := w["a"]; ok || len(w["b"]) != 1 {
		t.Fatalf("after settling a: %+v", w)
	}
}
