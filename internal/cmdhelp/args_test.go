package cmdhelp

import (
	"flag"
	"io"
	"slices"
	"testing"
)

// Flags may follow the other arguments, and "--" ends the flags; a wrong
// flag or value among them is an error.
func TestInterspersed(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	json := fs.Bool("json", false, "")
	limit := fs.Int("diff-limit", 50, "")
	rest, err := Interspersed(fs, []string{"a", "--json", "b", "--diff-limit", "3", "c", "--", "-d"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rest, []string{"a", "b", "c", "-d"}) || !*json || *limit != 3 {
		t.Errorf("rest %v, json %v, diff limit %d", rest, *json, *limit)
	}
	for _, args := range [][]string{{"a", "--no-such-flag"}, {"a", "--diff-limit", "soon"}} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Int("diff-limit", 50, "")
		if _, err := Interspersed(fs, args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
