package shadow

import (
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// A list reads back from what String prints (the default the help
// shows) and from its strategies' names (what the tables show).
func TestListReadsBackFromStringAndNames(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(t, "n")
		var want List
		for i := range n {
			spec := "adaptive"
			if !rapid.Bool().Draw(t, "adaptive") {
				ms := rapid.IntRange(0, 120_000).Draw(t, "ms")
				spec = (time.Duration(ms) * time.Millisecond).String()
			}
			if rapid.Bool().Draw(t, "noacc") {
				spec += "-noacc"
			}
			st, err := ParseStrategy(spec)
			if err != nil {
				t.Fatalf("strategy %d %q: %v", i, spec, err)
			}
			want = append(want, st)
		}
		names := make([]string, len(want))
		for i, st := range want {
			names[i] = st.Name
		}
		for _, text := range []string{want.String(), strings.Join(names, ",")} {
			var got List
			if err := got.Set(text); err != nil || !slices.Equal(got, want) {
				t.Fatalf("Set(%q) = %v, %v; want %v", text, got, err, want)
			}
		}
	})
	if err := new(List).Set("0,soon"); err == nil {
		t.Error(`Set("0,soon") succeeded`)
	}
	if d := DefaultList(); d.String() != "0s,200ms,500ms,2s,adaptive" {
		t.Errorf("default %q", d.String())
	}
}
