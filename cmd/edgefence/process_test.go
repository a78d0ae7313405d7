package main

import (
	"strings"
	"testing"
)

// An operator's GOGC stands: serve says the headroom tuner is off.
func TestServeLeavesAnOperatorsGOGC(t *testing.T) {
	p := startServe(t, t.TempDir(), []string{"GOGC=150"})
	if out := p.out.String(); !strings.Contains(out, "GOGC is set: --gc-headroom is off") {
		t.Fatalf("serve with GOGC=150 did not say the tuner is off:\n%s", out)
	}
	for _, env := range [][]string{nil, {"GOGC="}} { // empty: Go's default, as the runtime reads it
		p = startServe(t, t.TempDir(), env)
		if out := p.out.String(); strings.Contains(out, "--gc-headroom is off") {
			t.Fatalf("serve with %q turned the tuner off:\n%s", env, out)
		}
	}
}
