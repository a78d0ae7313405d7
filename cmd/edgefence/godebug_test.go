package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestGODEBUGWith(t *testing.T) {
	for _, tc := range []struct {
		cur, want string
		changed   bool
	}{
		{"", "gcshrinkstackoff=1", true},
		{"madvdontneed=1", "madvdontneed=1,gcshrinkstackoff=1", true},
		{"gcshrinkstackoff=0", "gcshrinkstackoff=0", false}, // the operator's word stands
		{"madvdontneed=1, gcshrinkstackoff=1", "madvdontneed=1, gcshrinkstackoff=1", false},
		{"xgcshrinkstackoff=0", "xgcshrinkstackoff=0,gcshrinkstackoff=1", true},
	} {
		v, changed := godebugWith(tc.cur, brokerGODEBUG)
		if v != tc.want || changed != tc.changed {
			t.Errorf("godebugWith(%q) = %q, %v; want %q, %v", tc.cur, v, changed, tc.want, tc.changed)
		}
	}
}

// environ is a running process's environment (Linux).
func environ(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

func godebugOf(env []string) []string {
	var out []string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			out = append(out, v)
		}
	}
	return out
}

// serve runs with goroutine stack shrinking off, in the process it was
// started as, unless the operator's GODEBUG says otherwise.
func TestServeRunsWithStackShrinkingOff(t *testing.T) {
	p := startServe(t, t.TempDir(), []string{"GODEBUG=madvdontneed=1"})
	if got := godebugOf(environ(t, p.cmd.Process.Pid)); len(got) != 1 || got[0] != "madvdontneed=1,gcshrinkstackoff=1" {
		t.Fatalf("serve's GODEBUG = %q, want the operator's settings and gcshrinkstackoff=1", got)
	}

	p = startServe(t, t.TempDir(), []string{"GODEBUG=gcshrinkstackoff=0"})
	if got := godebugOf(environ(t, p.cmd.Process.Pid)); len(got) != 1 || got[0] != "gcshrinkstackoff=0" {
		t.Fatalf("serve's GODEBUG = %q, want the operator's gcshrinkstackoff=0 kept", got)
	}
}
