package worker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/edgefence/edgefence/worker"
	"github.com/edgefence/edgefence/worker/subjects"
)

// TestShippedNATSConfig: the compose file's NATS configuration parses,
// maps telemetry onto the partitions a worker expects by default, and
// replicates the MQTT streams.
func TestShippedNATSConfig(t *testing.T) {
	t.Setenv("NATS_NAME", "nats-1")
	opts, err := server.ProcessConfigFile("../deploy/scaleout/nats.conf")
	if err != nil {
		t.Fatal(err)
	}
	if opts.MQTT.StreamReplicas != 3 || !opts.JetStream {
		t.Errorf("mqtt stream_replicas %d, jetstream %v: want 3, on", opts.MQTT.StreamReplicas, opts.JetStream)
	}
	conf, err := os.ReadFile("../deploy/scaleout/nats.conf")
	if err != nil {
		t.Fatal(err)
	}
	for from, to := range subjects.PartitionMappings(worker.DefaultPartitions) {
		if !strings.Contains(string(conf), `"`+from+`": "`+to+`"`) {
			t.Errorf("nats.conf does not map %s to %s", from, to)
		}
	}
	compose, err := os.ReadFile("../deploy/scaleout/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(compose), `EDGEFENCE_PARTITIONS: "16"`) || worker.DefaultPartitions != 16 {
		t.Error("compose.yaml's workers and nats.conf disagree on the partitions")
	}
}

func TestConfigValidate(t *testing.T) {
	for name, mod := range map[string]func(*worker.Config){
		"no partitions":         func(c *worker.Config) { c.Partitions = 0 },
		"dotted name":           func(c *worker.Config) { c.Name = "a.b" },
		"short lease":           func(c *worker.Config) { c.Lease = 100 * time.Millisecond },
		"1s lease":              func(c *worker.Config) { c.Lease = time.Second },
		"window below a replay": func(c *worker.Config) { c.DedupWindow = c.CheckpointEvery },
	} {
		cfg := worker.DefaultConfig()
		mod(&cfg)
		if err := cfg.Validate(); !errors.Is(err, worker.ErrConfig) {
			t.Errorf("%s: got %v, want ErrConfig", name, err)
		}
	}
	cfg := worker.DefaultConfig()
	if err := cfg.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// TestUnreadableSettingsAreConfigErrors: a CA file or creds file the
// worker cannot read stops Start before it connects anywhere, with an
// ErrConfig naming the flag, as a bad combination of settings does.
func TestUnreadableSettingsAreConfigErrors(t *testing.T) {
	dir := t.TempDir()
	fences := filepath.Join(dir, "fences.geojson")
	if err := os.WriteFile(fences, []byte(testFences), 0o600); err != nil {
		t.Fatal(err)
	}
	for flag, mod := range map[string]func(*worker.Config){
		"--nats-ca":    func(c *worker.Config) { c.Security.CA = filepath.Join(dir, "missing.pem") },
		"--nats-creds": func(c *worker.Config) { c.Security.Creds = filepath.Join(dir, "missing.creds") },
	} {
		cfg := worker.DefaultConfig()
		cfg.Fences, cfg.HTTPAddr = fences, ""
		cfg.NATS = "nats://127.0.0.1:1" // never dialled
		mod(&cfg)
		w, err := worker.Start(cfg)
		if err == nil {
			_ = w.Close(context.Background())
			t.Fatalf("%s: the worker started", flag)
		}
		if !errors.Is(err, worker.ErrConfig) || !strings.HasPrefix(err.Error(), "invalid worker configuration: "+flag) {
			t.Errorf("%s: %v", flag, err)
		}
	}
}
