package main

import (
	"flag"
	"io"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator"
)

// --hold takes "adaptive" or a duration; a duration is a fixed hold
// whatever the default is, so an existing config keeps its meaning.
func TestHoldFlag(t *testing.T) {
	for _, tc := range []struct {
		defaultAdaptive bool
		args            []string
		adaptive        bool
		hold            time.Duration
	}{
		{false, nil, false, evaluator.DefaultHold},
		{false, []string{"--hold", "adaptive"}, true, evaluator.DefaultHold},
		{true, []string{"--hold", "750ms"}, false, 750 * time.Millisecond},
		{true, []string{"--hold", "0"}, false, 0},
		{true, nil, true, evaluator.DefaultHold},
	} {
		e := evaluator.DefaultConfig()
		e.Adaptive = tc.defaultAdaptive
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		engineFlags(fs, &e)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if e.Adaptive != tc.adaptive || e.Hold != tc.hold {
			t.Errorf("default adaptive %v, %v: adaptive %v hold %v, want %v %v", tc.defaultAdaptive, tc.args, e.Adaptive, e.Hold, tc.adaptive, tc.hold)
		}
	}
	e := evaluator.DefaultConfig()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	engineFlags(fs, &e)
	if err := fs.Parse([]string{"--hold", "soon"}); err == nil {
		t.Error("--hold soon parsed")
	}
}
