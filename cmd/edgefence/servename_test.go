package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/cmdhelp"
	"github.com/edgefence/edgefence/worker"
)

// serveNodeFlags parses a serve command line as serve does, without
// running it.
func serveNodeFlags(t *testing.T, args ...string) (broker.Config, clusterFlags) {
	t.Helper()
	cfg := broker.DefaultConfig()
	cluster := defaultClusterFlags()
	proc := defaultProcessFlags()
	fs, _ := serveFlags(&cfg, &cluster, ingest.NewTopicFlags(), &proc)
	if err := ff.Parse(fs, args, configOptions()...); err != nil {
		t.Fatal(err)
	}
	return cfg, cluster
}

// TestServeClusterName: serve --cluster --name is the node's name in the
// lease bucket, as edgefence worker's --name is: by default host-pid, a
// name given reaches the node's worker, and a name the lease bucket cannot
// hold is refused with the worker's configuration error before a listener
// binds (the MQTT address here is taken, so a broker that started first
// would fail on it instead).
func TestServeClusterName(t *testing.T) {
	host, _ := os.Hostname()
	if _, c := serveNodeFlags(t); c.Name != fmt.Sprintf("%s-%d", host, os.Getpid()) {
		t.Errorf("default name %q, want host-pid as the worker's", c.Name)
	}
	cfg, c := serveNodeFlags(t, "--cluster", "nats://127.0.0.1:4222", "--name", "edgefence-2")
	cfg.Cluster, cfg.Log = &c.Options, discardLog()
	if w := workerConfig(cfg); w.Name != "edgefence-2" || cfg.Cluster.Name != "edgefence-2" {
		t.Errorf("--name edgefence-2: the worker's name %q, the ping stream connection's %q", w.Name, cfg.Cluster.Name)
	}

	taken := listen(t)
	for _, bad := range []string{"", "edge.fence", "node 1", "node*", "node>"} {
		for _, evaluate := range []string{"true", "false"} {
			var stdout, stderr strings.Builder
			code := run(t.Context(), []string{"serve", "--cluster", "nats://127.0.0.1:4222", "--name", bad, "--evaluate=" + evaluate,
				"--mqtt-addr", taken, "--http-addr", "", "--data-dir", t.TempDir(), "--fences", bundledFences}, &stdout, &stderr)
			if code != cmdhelp.ExitFailed || !strings.Contains(stderr.String(), worker.ErrConfig.Error()) || !strings.Contains(stderr.String(), fmt.Sprintf("%q", bad)) {
				t.Errorf("--name %q --evaluate=%s: exit %d, stderr %q; want %d and the worker's configuration error naming it", bad, evaluate, code, stderr.String(), cmdhelp.ExitFailed)
			}
		}
	}
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// listen holds a loopback port for the test and returns its address.
func listen(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}
