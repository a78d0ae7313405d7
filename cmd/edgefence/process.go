package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/edgefence/edgefence/internal/flagvalue"
)

// processFlags are serve's and bridge's process-wide settings.
type processFlags struct {
	logLevel string
	memLimit int64
}

func defaultProcessFlags() processFlags {
	return processFlags{logLevel: "info"}
}

func (p *processFlags) register(fs *flag.FlagSet) {
	fs.Var(flagvalue.Size{P: &p.memLimit}, "memory-limit", "Go soft memory limit (e.g. 512MiB; 0: GOMEMLIMIT or none): the GC works harder near it instead of the box running out")
	fs.StringVar(&p.logLevel, "log-level", p.logLevel, "debug, info, warn or error")
}

// setup applies them: it sets the soft memory limit and returns the
// logger at the chosen level.
func (p *processFlags) setup() (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(p.logLevel)); err != nil {
		return nil, fmt.Errorf("log level: %w", err)
	}
	if p.memLimit > 0 {
		debug.SetMemoryLimit(p.memLimit)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})), nil
}
