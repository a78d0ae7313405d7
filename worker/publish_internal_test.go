package worker

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestPropertyWaves: the waves cover a batch in order, each holds at
// most one output per device and maxWave outputs, and each ends only at
// a device it already holds, at maxWave or at the batch's end.
func TestPropertyWaves(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		devices := rapid.SliceOfN(rapid.StringMatching(`d[0-9]`), 1, 10).Draw(t, "devices")
		n := rapid.IntRange(0, 3*maxWave).Draw(t, "n")
		buf := make([]out, n)
		for i := range buf {
			buf[i].device = rapid.SampledFrom(devices).Draw(t, "device")
			buf[i].id = string(rune('a' + i%26))
		}
		if rapid.Bool().Draw(t, "distinct") { // long waves, cut at maxWave
			for i := range buf {
				buf[i].device = string(rune(i))
			}
		}
		pt := &partition{inWave: map[string]struct{}{}}
		var got []out
		for rest := buf; len(rest) > 0; {
			k := pt.waveLen(rest)
			if k < 1 || k > maxWave {
				t.Fatalf("wave of %d outputs", k)
			}
			seen := map[string]bool{}
			for _, o := range rest[:k] {
				if seen[o.device] {
					t.Fatalf("device %q twice in a wave", o.device)
				}
				seen[o.device] = true
			}
			if k < len(rest) && k < maxWave && !seen[rest[k].device] {
				t.Fatalf("wave cut at %d before a new device %q", k, rest[k].device)
			}
			got = append(got, rest[:k]...)
			rest = rest[k:]
		}
		if !slices.EqualFunc(got, buf, func(a, b out) bool { return a.id == b.id && a.device == b.device }) {
			t.Fatal("the waves do not cover the batch in order")
		}
	})
}

// TestPropertyPos: a position survives its header, the order is the
// stream's, and anything else in the header is refused.
func TestPropertyPos(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := pos{rapid.Uint64().Draw(t, "seq"), rapid.IntRange(0, 1<<20).Draw(t, "k")}
		if got, ok := parsePos(a.String()); !ok || got != a {
			t.Fatalf("parsePos(%q) = %v, %v", a.String(), got, ok)
		}
		b := pos{rapid.Uint64().Draw(t, "seq2"), rapid.IntRange(0, 1<<20).Draw(t, "k2")}
		want := a.seq < b.seq || a.seq == b.seq && a.k < b.k
		if a.less(b) != want || (a.less(b) && b.less(a)) {
			t.Fatalf("%v.less(%v) = %v", a, b, a.less(b))
		}
		s := rapid.String().Draw(t, "header")
		if p, ok := parsePos(s); ok {
			if q, ok := parsePos(p.String()); !ok || q != p {
				t.Fatalf("parsePos(%q) = %v, which does not survive its header", s, p)
			}
		}
	})
	for _, bad := range []string{"", "12", "12/", "/3", "x/1", "1/-1", "1/2/3"} {
		if _, ok := parsePos(bad); ok {
			t.Errorf("parsePos(%q) accepted", bad)
		}
	}
}
