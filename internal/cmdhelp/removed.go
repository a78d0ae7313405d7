package cmdhelp

import (
	"flag"
	"fmt"
	"log/slog"
)

// Removed is a flag an earlier version had. Old config files and units
// still set them: they are reported rather than stopping the command with
// "flag provided but not defined", and one whose loss would strand
// clients (trackers pointed at a listener that is gone) refuses to start.
// The help leaves them out.
type Removed struct {
	Name   string
	Advice string
	Bool   bool // takes no value on the command line
	Fatal  bool
	set    bool
}

func (f *Removed) String() string   { return "" }
func (f *Removed) IsBoolFlag() bool { return f.Bool }
func (f *Removed) Set(string) error { f.set = true; return nil }

// RegisterRemoved defines the removed flags on fs.
func RegisterRemoved(fs *flag.FlagSet, flags []*Removed) {
	for _, f := range flags {
		fs.Var(f, f.Name, "removed: "+f.Advice)
	}
}

// CheckRemoved logs the removed flags of fs that were set, and fails on
// a fatal one.
func CheckRemoved(fs *flag.FlagSet, log *slog.Logger) error {
	var err error
	fs.VisitAll(func(fl *flag.Flag) {
		f, ok := fl.Value.(*Removed)
		if !ok || !f.set || err != nil {
			return
		}
		if f.Fatal {
			err = fmt.Errorf("--%s was removed: %s", f.Name, f.Advice)
			return
		}
		log.Warn("removed flag set", "flag", f.Name, "advice", f.Advice)
	})
	return err
}

// isRemoved reports whether f is a removed flag, which the help leaves
// out: still accepted, to explain itself, but no longer offered.
func isRemoved(f *flag.Flag) bool {
	_, ok := f.Value.(*Removed)
	return ok
}
