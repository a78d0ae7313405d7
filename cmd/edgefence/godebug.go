package main

import (
	"os"
	"strings"
	"syscall"
)

// brokerGODEBUG are the runtime settings serve and bridge run with unless
// GODEBUG names them already.
//
// gcshrinkstackoff=1: each GC halved the stack of every connection's
// reader goroutine (idle in a read at that moment) and its next packet
// grew it back, 32 KiB on mochi's deep publish path; at 10,000 trackers
// that churn held about 190 MB more RSS (820 → 639 MB) and cost 3–4 % of
// the CPU in copystack (docs/performance.md). Without shrinking, a
// goroutine keeps the largest stack it has used, which mochi's bounded
// packet path caps.
var brokerGODEBUG = []string{"gcshrinkstackoff=1"}

// withBrokerGODEBUG replaces the process with itself — same PID,
// arguments and environment — with brokerGODEBUG added to GODEBUG, when
// the subcommand runs a broker. The runtime reads GODEBUG only as it
// starts, and these settings cannot be set with a //go:debug line. If the
// exec fails the process carries on with the runtime's defaults.
func withBrokerGODEBUG(args []string) {
	if len(args) == 0 || (args[0] != "serve" && args[0] != "bridge") {
		return
	}
	cur, _ := os.LookupEnv("GODEBUG")
	v, changed := godebugWith(cur, brokerGODEBUG)
	if !changed {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	_ = syscall.Exec(exe, os.Args, setEnv(os.Environ(), "GODEBUG", v))
}

// godebugWith adds to a GODEBUG value the settings whose keys it does not
// name; changed is false when it names them all.
func godebugWith(cur string, settings []string) (v string, changed bool) {
	v = cur
	for _, s := range settings {
		key, _, _ := strings.Cut(s, "=")
		named := false
		for _, kv := range strings.Split(cur, ",") {
			if k, _, _ := strings.Cut(strings.TrimSpace(kv), "="); k == key {
				named = true
			}
		}
		if named {
			continue
		}
		if v != "" {
			v += ","
		}
		v += s
		changed = true
	}
	return v, changed
}

// setEnv returns env with key set to value, replacing every entry of key.
func setEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}
