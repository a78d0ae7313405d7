package main

import (
	"io"
	"os"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/progress"
)

// statusEvery is how often a status line is redrawn: smooth enough to
// watch, rare enough to cost nothing.
const statusEvery = 200 * time.Millisecond

// newStatus starts a command's status line drawing to w: the command's
// stderr when it is a terminal and --json is off (progress.Stderr), or
// nil for a line that only counts.
func newStatus(w io.Writer, o progress.Options) *progress.Line {
	if f, ok := w.(*os.File); ok {
		o.Width = progress.Width(f)
	}
	l := progress.New(w, o)
	l.Start(statusEvery)
	return l
}

// countDevices returns observe, counting on line each device the
// simulation starts. Without a line drawing, observe is returned as it
// is (nil stays nil: the simulation then skips the call).
func countDevices(line *progress.Line, observe func([]engine.Ping)) func([]engine.Ping) {
	if !line.Active() {
		return observe
	}
	return func(arrivals []engine.Ping) {
		line.Add(1)
		if observe != nil {
			observe(arrivals)
		}
	}
}
