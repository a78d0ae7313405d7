package main

import (
	"testing"

	"github.com/peterbourgon/ff/v3"

	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/worker"
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
	topics := &stringList{values: ingest.DefaultTelemetryFilters}
	proc := defaultProcessFlags()
	fs := workerFlags(&cfg, topics, &proc)
	if err := ff.Parse(fs, nil, configOptions()...); err != nil {
		t.Fatal(err)
	}
	want := worker.Security{Creds: "/etc/edgefence/worker.creds", User: "edge", Password: "a,b,,c",
		CA: "/etc/edgefence/ca.pem", Cert: "/etc/edgefence/worker.pem", Key: "/etc/edgefence/worker-key.pem"}
	if cfg.NATS != "nats://n1:4222,nats://n2:4222,nats://n3:4222" || cfg.MQTT != "n1:1883,tls://n2:8883" || cfg.Security != want {
		t.Errorf("got NATS %q, MQTT %q, %+v", cfg.NATS, cfg.MQTT, cfg.Security)
	}
	if err := cfg.Validate(); err == nil {
		t.Error("creds and a user together validated")
	}
}
