//go:build race

package broker

// Under the race detector sync.Pool drops a quarter of what is put back,
// so pooled buffers are allocated again: allocation counts mean nothing.
func init() { raceEnabled = true }
