package broker

import "testing"

// A dashboard's outbound queue is long when trackers do not each get one
// (the tracker path), short when mochi serves them, and what it is set to
// otherwise.
func TestClientQueueFollowsTheTrackerPath(t *testing.T) {
	for _, c := range []struct {
		name  string
		set   func(*Config)
		queue int32
	}{
		{"default", func(*Config) {}, LightClientQueue},
		{"--light-trackers=false", func(c *Config) { c.LightTrackers = false }, DefaultClientQueue},
		{"--direct-ingest=false", func(c *Config) { c.DirectIngest = false }, DefaultClientQueue},
		{"--engine=off", func(c *Config) { c.EngineOff = true }, DefaultClientQueue},
		{"--client-queue 300", func(c *Config) { c.ClientQueue = 300 }, 300},
		{"--client-queue 300 --light-trackers=false", func(c *Config) { c.ClientQueue, c.LightTrackers = 300, false }, 300},
	} {
		cfg := DefaultConfig()
		c.set(&cfg)
		if got := cfg.ClientQueueFor(); got != c.queue {
			t.Errorf("%s: queue %d, want %d", c.name, got, c.queue)
		}
	}
}
