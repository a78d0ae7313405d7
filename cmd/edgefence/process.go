package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"github.com/edgefence/edgefence/gctune"
)

// processFlags are serve's and bridge's process-wide settings.
type processFlags struct {
	logLevel   string
	memLimit   int64
	gcHeadroom int64
}

func defaultProcessFlags() processFlags {
	return processFlags{logLevel: "info", gcHeadroom: 128 << 20}
}

func (p *processFlags) register(fs *flag.FlagSet) {
	fs.Var(byteSize{&p.memLimit}, "memory-limit", "Go soft memory limit (e.g. 512MiB; 0: none): the GC works harder near it instead of the box running out")
	fs.Var(byteSize{&p.gcHeadroom}, "gc-headroom", "heap growth the GC waits for between cycles at least (GOGC raised up to 400 for small heaps; 0 or GOGC set: Go's default): fewer GC pauses in transition latency for some memory")
	fs.StringVar(&p.logLevel, "log-level", p.logLevel, "debug, info, warn or error")
}

// setup applies them: the log level (the returned logger), the memory
// limit and the GC headroom tuner, which stop stops.
func (p *processFlags) setup() (log *slog.Logger, stop func(), err error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(p.logLevel)); err != nil {
		return nil, nil, fmt.Errorf("log level: %w", err)
	}
	log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if p.memLimit > 0 {
		debug.SetMemoryLimit(p.memLimit)
	}
	stop = func() {}
	if os.Getenv("GOGC") != "" { // empty is Go's default, as the runtime reads it
		log.Info("GOGC is set: --gc-headroom is off")
	} else if p.gcHeadroom > 0 {
		t := gctune.Start(uint64(p.gcHeadroom), time.Second)
		stop = t.Stop
	}
	return log, stop, nil
}
