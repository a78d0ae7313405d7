//go:build unix

package main

import (
	"os"
	"strings"
	"syscall"
)

// stackShrinkOff is the GODEBUG setting serve runs with. A tracker's
// connection is served by a goroutine whose stack a ping takes to 8 KiB
// (mochi patches 0023–0024; 0031 keeps the handshake off it) and whose
// idle wait needs less than a quarter of that, so every garbage
// collection halved it and the next ping grew it back: a tenth of the
// broker's CPU at 10,000 trackers pinging every 200 ms
// (docs/performance.md). With shrinking off each reader keeps its 8 KiB.
const stackShrinkOff = "gcshrinkstackoff=1"

// runWithStackShrinkOff replaces the process with itself under GODEBUG
// with stackShrinkOff added, once, before anything else runs: the
// runtime reads the setting only at start. A GODEBUG that names
// gcshrinkstackoff already is the user's choice and is kept, and if the
// exec fails the command runs as it is.
func runWithStackShrinkOff() {
	godebug := os.Getenv("GODEBUG")
	if strings.Contains(godebug, "gcshrinkstackoff=") {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	if godebug != "" {
		godebug += ","
	}
	env := []string{"GODEBUG=" + godebug + stackShrinkOff}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GODEBUG=") {
			env = append(env, kv)
		}
	}
	_ = syscall.Exec(exe, os.Args, env) // returns only on failure
}
