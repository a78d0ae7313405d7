package wave

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestPropertyWaves: the waves cover a batch in order, each holds at
// most one output per device and Max outputs, and each ends only at
// a device it already holds, at Max or at the batch's end.
func TestPropertyWaves(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		devices := rapid.SliceOfN(rapid.StringMatching(`d[0-9]`), 1, 10).Draw(t, "devices")
		n := rapid.IntRange(0, 3*Max).Draw(t, "n")
		buf := make([]Out, n)
		for i := range buf {
			buf[i].Device = rapid.SampledFrom(devices).Draw(t, "device")
			buf[i].ID = string(rune('a' + i%26))
		}
		if rapid.Bool().Draw(t, "distinct") { // long waves, cut at Max
			for i := range buf {
				buf[i].Device = string(rune(i))
			}
		}
		scratch := map[string]struct{}{}
		var got []Out
		for rest := buf; len(rest) > 0; {
			k := Len(rest, scratch)
			if k < 1 || k > Max {
				t.Fatalf("wave of %d outputs", k)
			}
			seen := map[string]bool{}
			for _, o := range rest[:k] {
				if seen[o.Device] {
					t.Fatalf("device %q twice in a wave", o.Device)
				}
				seen[o.Device] = true
			}
			if k < len(rest) && k < Max && !seen[rest[k].Device] {
				t.Fatalf("wave cut at %d before a new device %q", k, rest[k].Device)
			}
			got = append(got, rest[:k]...)
			rest = rest[k:]
		}
		if !slices.EqualFunc(got, buf, func(a, b Out) bool { return a.ID == b.ID && a.Device == b.Device }) {
			t.Fatal("the waves do not cover the batch in order")
		}
	})
}

// TestPropertyPos: a position survives its header, the order is the
// stream's, and anything else in the header is refused.
func TestPropertyPos(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := Pos{rapid.Uint64().Draw(t, "seq"), rapid.IntRange(0, 1<<20).Draw(t, "k")}
		if got, ok := ParsePos(a.String()); !ok || got != a {
			t.Fatalf("ParsePos(%q) = %v, %v", a.String(), got, ok)
		}
		b := Pos{rapid.Uint64().Draw(t, "seq2"), rapid.IntRange(0, 1<<20).Draw(t, "k2")}
		want := a.seq < b.seq || a.seq == b.seq && a.k < b.k
		if a.Less(b) != want || (a.Less(b) && b.Less(a)) {
			t.Fatalf("%v.Less(%v) = %v", a, b, a.Less(b))
		}
		s := rapid.String().Draw(t, "header")
		if p, ok := ParsePos(s); ok {
			if q, ok := ParsePos(p.String()); !ok || q != p {
				t.Fatalf("ParsePos(%q) = %v, which does not survive its header", s, p)
			}
		}
	})
	for _, bad := range []string{"", "12", "12/", "/3", "x/1", "1/-1", "1/2/3"} {
		if _, ok := ParsePos(bad); ok {
			t.Errorf("ParsePos(%q) accepted", bad)
		}
	}
}

// TestPropertyDropKeepsTheRestInOrder: after n outputs are published and
// dropped, the sink holds the others, in order, and collects after them.
func TestPropertyDropKeepsTheRestInOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var s Sink
		for i := range rapid.IntRange(0, 50).Draw(t, "len") {
			s.Apply(uint64(i + 1))
			s.add(Out{ID: string(rune('a' + i%26)), Device: "d"})
		}
		want := slices.Clone(s.Buf)
		n := rapid.IntRange(0, len(want)).Draw(t, "published")
		s.Drop(n)
		if !slices.EqualFunc(s.Buf, want[n:], func(a, b Out) bool { return a.ID == b.ID && a.Pos == b.Pos }) {
			t.Fatalf("after dropping %d of %d: %v, want %v", n, len(want), s.Buf, want[n:])
		}
		s.Apply(1000)
		s.add(Out{ID: "next"})
		if last := s.Buf[len(s.Buf)-1]; last.ID != "next" || len(s.Buf) != len(want)-n+1 {
			t.Fatalf("the next output is not collected after the kept ones: %v", s.Buf)
		}
	})
}
