package main

import "github.com/edgefence/edgefence/internal/cmdhelp"

// removedServeFlags are serve's retired flags (cmdhelp.Removed).
func removedServeFlags() []*cmdhelp.Removed {
	return []*cmdhelp.Removed{
		{Name: "light-trackers", Bool: true, Advice: "mochi serves every client now; the flag is ignored"},
		{Name: "direct-ingest", Bool: true, Advice: "every publish goes through mochi's hooks now; the flag is ignored"},
		{Name: "gc-headroom", Advice: "use --memory-limit to bound the heap; the flag is ignored"},
		{Name: "tracker-addr", Fatal: true, Advice: "there is no separate tracker listener any more: point the trackers at --mqtt-addr and remove the flag"},
	}
}
