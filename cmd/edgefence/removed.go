package main

import (
	"flag"
	"fmt"
	"log/slog"
)

// removedFlag is a flag an earlier version had. Old config files and
// units still set them: they are reported rather than stopping serve with
// "flag provided but not defined", and the one whose loss would strand
// clients (trackers pointed at a listener that is gone) refuses to start.
type removedFlag struct {
	name    string
	advice  string
	boolean bool // takes no value on the command line
	fatal   bool
	set     bool
}

func (f *removedFlag) String() string   { return "" }
func (f *removedFlag) IsBoolFlag() bool { return f.boolean }
func (f *removedFlag) Set(string) error { f.set = true; return nil }

// removedFlags are serve's retired flags.
type removedFlags []*removedFlag

func newRemovedServeFlags() removedFlags {
	return removedFlags{
		{name: "light-trackers", boolean: true, advice: "mochi serves every client now; the flag is ignored"},
		{name: "direct-ingest", boolean: true, advice: "every publish goes through mochi's hooks now; the flag is ignored"},
		{name: "gc-headroom", advice: "use --memory-limit to bound the heap; the flag is ignored"},
		{name: "tracker-addr", fatal: true, advice: "there is no separate tracker listener any more: point the trackers at --mqtt-addr and remove the flag"},
	}
}

// removedFlagsOf returns the removed flags registered on fs.
func removedFlagsOf(fs *flag.FlagSet) removedFlags {
	var rs removedFlags
	fs.VisitAll(func(f *flag.Flag) {
		if r, ok := f.Value.(*removedFlag); ok {
			rs = append(rs, r)
		}
	})
	return rs
}

// register defines the removed flags on fs; the help leaves them out.
func (rs removedFlags) register(fs *flag.FlagSet) {
	for _, f := range rs {
		fs.Var(f, f.name, "removed: "+f.advice)
	}
}

// check logs the removed flags that were set, and fails on a fatal one.
func (rs removedFlags) check(log *slog.Logger) error {
	for _, f := range rs {
		if !f.set {
			continue
		}
		if f.fatal {
			return fmt.Errorf("--%s was removed: %s", f.name, f.advice)
		}
		log.Warn("removed flag set", "flag", f.name, "advice", f.advice)
	}
	return nil
}
