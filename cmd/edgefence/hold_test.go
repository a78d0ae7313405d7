package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
)

// --hold takes "adaptive" or a duration; a duration is a fixed hold, so
// an existing config keeps its meaning.
func TestHoldFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		hold time.Duration
	}{
		{nil, engine.DefaultHold},
		{[]string{"--hold", "adaptive"}, engine.AdaptiveHold},
		{[]string{"--hold", "750ms"}, 750 * time.Millisecond},
		{[]string{"--hold", "0"}, 0},
	} {
		e := engine.DefaultConfig()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		engineFlags(fs, &e)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if e.Hold != tc.hold {
			t.Errorf("%v: hold %v, want %v", tc.args, e.Hold, tc.hold)
		}
	}
	e := engine.DefaultConfig()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	engineFlags(fs, &e)
	if err := fs.Parse([]string{"--hold", "soon"}); err == nil {
		t.Error("--hold soon parsed")
	}
	if f := fs.Lookup("hold"); f.DefValue != "500ms" {
		t.Errorf("--hold's default reads %q, want 500ms", f.DefValue)
	}
}
