package bridge

import (
	"strings"
	"testing"

	"github.com/edgefence/edgefence/ingest"
)

func TestConfigValidate(t *testing.T) {
	own, _ := ingest.ParseTelemetryFilter("geofence/+/+")
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		err  string // substring; "" valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"mqtts", func(c *Config) { c.Upstream = "mqtts://broker.example:8883" }, ""},
		{"no port", func(c *Config) { c.Upstream = "mqtt://broker.example" }, ""},
		{"scheme", func(c *Config) { c.Upstream = "http://broker.example" }, "--upstream"},
		{"no host", func(c *Config) { c.Upstream = "mqtt://" }, "--upstream"},
		{"ca without tls", func(c *Config) { c.CA = "ca.pem" }, "mqtts://"},
		{"cert without key", func(c *Config) { c.Upstream = "mqtts://b:8883"; c.Cert = "c.pem" }, "--cert and --key"},
		{"client id", func(c *Config) { c.ClientID = "" }, "--client-id"},
		{"reads its own output", func(c *Config) { c.Telemetry = append(c.Telemetry, own) }, "own output"},
		{"prefix wildcard", func(c *Config) { c.TransitionPrefix = "geo/#" }, "--transition-prefix"},
		{"max queued", func(c *Config) { c.MaxQueued = 0 }, "--max-queued"},
		{"exit expiry", func(c *Config) { c.ExitExpiry = 0 }, "exit expiry"},
		{"engine", func(c *Config) { c.Engine.Hold = -1 }, "hold"},
	} {
		cfg := DefaultConfig()
		tc.mod(&cfg)
		u, err := cfg.validate()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.err)
		case tc.err == "" && u.Port() == "":
			t.Errorf("%s: no port in %s", tc.name, u)
		}
	}
}
