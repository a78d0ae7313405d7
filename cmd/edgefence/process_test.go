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

// Sizes read back as written, so -h shows the defaults as a user would
// type them.
func TestByteSizeRoundTrip(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"128MiB", "128MiB"}, {"1GiB", "1GiB"}, {"1024MiB", "1GiB"}, {"1536KiB", "1536KiB"}, {"1000", "1000"}, {"0", "0"},
	} {
		var n int64
		if err := (byteSize{&n}).Set(tc.in); err != nil {
			t.Fatalf("Set(%q): %v", tc.in, err)
		}
		if got := (byteSize{&n}).String(); got != tc.out {
			t.Errorf("Set(%q) reads back %q, want %q", tc.in, got, tc.out)
		}
	}
	var n int64
	for _, bad := range []string{"-1", "12MB", "lots"} {
		if err := (byteSize{&n}).Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}
