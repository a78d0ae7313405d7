package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestServeRunsWithStackShrinkingOff checks the environment serve runs
// with, as /proc shows it for the process the operator started (same
// pid: it replaced itself): GODEBUG gains gcshrinkstackoff=1 beside what
// the operator set, and an operator's own gcshrinkstackoff stands.
func TestServeRunsWithStackShrinkingOff(t *testing.T) {
	for _, tc := range []struct{ env, want string }{
		{"", "gcshrinkstackoff=1"},
		{"GODEBUG=http2client=0", "http2client=0,gcshrinkstackoff=1"},
		{"GODEBUG=gcshrinkstackoff=0", "gcshrinkstackoff=0"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			var env []string
			if tc.env != "" {
				env = append(env, tc.env)
			}
			p := startServe(t, "", withoutGODEBUG(env))
			environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.cmd.Process.Pid))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, kv := range strings.Split(string(environ), "\x00") {
				if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
					got = append(got, v)
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("serve's GODEBUG: %q, want [%q]", got, tc.want)
			}
		})
	}
}

// withoutGODEBUG drops the test's own GODEBUG, which cleanEnv would pass
// on, leaving env's.
func withoutGODEBUG(env []string) []string {
	if _, set := os.LookupEnv("GODEBUG"); set {
		env = append([]string{"GODEBUG="}, env...)
	}
	return env
}
