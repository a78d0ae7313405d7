package cluster_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/edgefence/edgefence/internal/natstest"
	"github.com/edgefence/edgefence/worker/checkpoint"
	"github.com/edgefence/edgefence/worker/cluster"
)

// TestWorkerConnectionBuffersNothingWhileDown: while the worker's NATS
// connection is down, a write fails at once instead of waiting in nats.go's
// reconnect buffer to go out once it is back. A partition's history record
// sent then would land after the partition had stopped for its lease, and
// after another owner had read the stream for what it may have left.
func TestWorkerConnectionBuffersNothingWhileDown(t *testing.T) {
	s := startJetStream(t)
	c, err := cluster.Dial(cluster.Options{NATS: s.ClientURL(), Name: "w1", Partitions: 1, Replicas: 1, Lease: 2 * time.Second,
		DedupWindow: time.Minute, PingsMaxAge: time.Hour, CheckpointStream: checkpoint.StreamConfig(1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.NATS.Publish("edgefence.test", nil); err != nil {
		t.Fatalf("publish while connected: %v", err)
	}
	s.Shutdown()
	s.WaitForShutdown()
	for try := 0; !c.NATS.IsReconnecting(); try++ {
		if try == 200 {
			t.Fatal("the connection did not notice its server's end")
		}
		time.Sleep(25 * time.Millisecond)
	}
	if err := c.NATS.Publish("edgefence.test", nil); err == nil {
		t.Error("a publish while the connection is down was accepted: it waits in the reconnect buffer, to go out once the connection is back")
	}
}

// startJetStream starts one NATS server with JetStream in the test's
// process, on a loopback port of its choosing.
func startJetStream(t *testing.T) *server.Server {
	t.Helper()
	dir := t.TempDir()
	s, _ := natstest.Start(t, dir, "nats.conf", fmt.Sprintf("listen: \"127.0.0.1:-1\"\njetstream { store_dir: %q }\n", filepath.Join(dir, "js")))
	return s
}
