package worker

import "time"

// SetFenceGrace sets how long a stored fence version is kept regardless
// (fenceGrace) for a test, and returns what restores it. Call it before
// starting workers.
func SetFenceGrace(d time.Duration) (restore func()) {
	old := fenceGrace
	fenceGrace = d
	return func() { fenceGrace = old }
}

// LapseLeases stops every partition w owns as when their leases could not
// be renewed in time (the lease bucket unreachable), though they are still
// w's in the bucket.
func LapseLeases(w *Worker) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for n, pt := range w.parts {
		w.m.lost.Inc()
		w.lapseLocked(n, pt)
	}
}

// AskReplace asks w's partition n for a new consumer, as the watchdog
// does for a stalled one, and reports whether w owns n.
func AskReplace(w *Worker, n int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	pt, ok := w.parts[n]
	if ok {
		pt.AskReplace()
	}
	return ok
}

// Replacing reports whether w's partition n is trying to make a new
// consumer.
func Replacing(w *Worker, n int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	pt, ok := w.parts[n]
	return ok && pt.Progress.Replacing.Load()
}
