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
