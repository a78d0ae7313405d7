package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/peterbourgon/ff/v3"

	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/worker"
	"github.com/edgefence/edgefence/worker/security"
	"github.com/edgefence/edgefence/worker/subjects"
)

// TestWorkerFlagsFromEnv: the worker's connection settings come whole
// from the environment, also when they hold commas (ff splits a variable
// on commas and sets each piece).
func TestWorkerFlagsFromEnv(t *testing.T) {
	t.Setenv("EDGEFENCE_NATS", "nats://n1:4222,nats://n2:4222,nats://n3:4222")
	t.Setenv("EDGEFENCE_NATS_MQTT", "n1:1883,tls://n2:8883")
	t.Setenv("EDGEFENCE_NATS_USER", "edge")
	t.Setenv("EDGEFENCE_NATS_PASSWORD", "a,b,,c")
	t.Setenv("EDGEFENCE_NATS_CA", "/etc/edgefence/ca.pem")
	t.Setenv("EDGEFENCE_NATS_CERT", "/etc/edgefence/worker.pem")
	t.Setenv("EDGEFENCE_NATS_KEY", "/etc/edgefence/worker-key.pem")
	t.Setenv("EDGEFENCE_NATS_CREDS", "/etc/edgefence/worker.creds")
	cfg := worker.DefaultConfig()
	topics := ingest.NewTopicFlags()
	proc := defaultProcessFlags()
	var printMappings bool
	fs, _ := workerFlags(&cfg, topics, &proc, &printMappings)
	if err := ff.Parse(fs, nil, configOptions()...); err != nil {
		t.Fatal(err)
	}
	want := security.Settings{Creds: "/etc/edgefence/worker.creds", User: "edge", Password: "a,b,,c",
		CA: "/etc/edgefence/ca.pem", Cert: "/etc/edgefence/worker.pem", Key: "/etc/edgefence/worker-key.pem"}
	if cfg.NATS != "nats://n1:4222,nats://n2:4222,nats://n3:4222" || cfg.MQTT != "n1:1883,tls://n2:8883" || cfg.Security != want {
		t.Errorf("got NATS %q, MQTT %q, %+v", cfg.NATS, cfg.MQTT, cfg.Security)
	}
	if err := cfg.Validate(); err == nil {
		t.Error("creds and a user together validated")
	}
}

// TestPrintNATSMappings: what --print-nats-mappings prints is a NATS
// configuration block the server takes, with one mapping per filter.
func TestPrintNATSMappings(t *testing.T) {
	tf, err := ingest.ParseTelemetryFilters(append(slices.Clone(subjects.DefaultTelemetryFilters), "fleet/+/gps/pos.v2"))
	if err != nil {
		t.Fatal(err)
	}
	out := natsMappings(tf, 32)
	path := filepath.Join(t.TempDir(), "nats.conf")
	if err := os.WriteFile(path, []byte("listen: 127.0.0.1:-1\n"+out), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := server.ProcessConfigFile(path); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		`"v3.*.devices.*.up": "edgefence.p.{{partition(32,2)}}.v3.{{wildcard(1)}}.devices.{{wildcard(2)}}.up"`,
		`"fleet.*.gps.pos//v2": "edgefence.p.{{partition(32,1)}}.fleet.{{wildcard(1)}}.gps.pos//v2"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("mappings lack %s:\n%s", want, out)
		}
	}
}
