package bridge

// Test helpers: a real Mosquitto started by the test on a free loopback
// port, real MQTT 5 clients (paho.golang), an MQTT-aware TCP proxy that can
// hold the bridge's publishes, and the bridge itself in-process. Nothing
// of the broker is mocked.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgefence/edgefence/auth"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// wait bounds every wait for something the bridge or the broker should do.
const wait = 10 * time.Second

// Positions, checked against ../fences.geojson.
const (
	museumLat, museumLon = 52.52, 13.40 // inside only zone-museumsinsel
	outLat, outLon       = 52.50, 13.30 // inside no fence
)

// testLog is where bridges under test log: nowhere unless
// EDGEFENCE_TEST_LOG is set.
func testLog() *slog.Logger {
	if os.Getenv("EDGEFENCE_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

var clientSeq atomic.Int64

// testConfig is the default configuration against upstream, with the
// bundled fences, a fresh queue, a unique client id, fast reconnects and a
// 100 ms hold.
func testConfig(t *testing.T, upstream string) Config {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Upstream = upstream
	cfg.ClientID = fmt.Sprintf("bridge-%s-%d", t.Name(), clientSeq.Add(1))
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.Fences = filepath.Join("..", "fences.geojson")
	cfg.FencesPoll = 0
	cfg.QueueDir = filepath.Join(t.TempDir(), "queue")
	cfg.Engine.Hold = 100 * time.Millisecond
	cfg.Engine.Shards = 2
	// The fixtures jump kilometres in a second, which the speed gate (on by
	// default) sets aside; the gate has tests of its own.
	cfg.Engine.MaxSpeed = 0
	cfg.ReconnectMin, cfg.ReconnectMax = 20*time.Millisecond, 200*time.Millisecond
	cfg.ConnectTimeout = 2 * time.Second
	cfg.RestoreQuiet, cfg.RestoreTimeout = 100*time.Millisecond, wait
	cfg.CloseTimeout = wait
	cfg.Log = testLog()
	return cfg
}

// startBridge starts a bridge, waits until it is ready and closes it when
// the test ends (unless the test did).
func startBridge(t *testing.T, cfg Config) *Bridge {
	t.Helper()
	b, err := Start(cfg)
	if err != nil {
		t.Fatalf("bridge.Start: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(context.Background()); err != nil {
			t.Errorf("bridge Close: %v", err)
		}
	})
	select {
	case <-b.Ready():
	case <-time.After(wait):
		t.Fatalf("bridge not ready after %v", wait)
	}
	return b
}

// closeBridge closes b now, gracefully.
func closeBridge(t *testing.T, b *Bridge) {
	t.Helper()
	if err := b.Close(context.Background()); err != nil {
		t.Fatalf("bridge Close: %v", err)
	}
}

// eventually polls cond until it holds, failing the test after wait.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", wait, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// secret is every test user's password; hashed is its argon2id hash, made
// once per test binary (about 0.25 s under -race).
const secret = "bridge-test-secret"

var hashOnce = sync.OnceValues(func() (string, error) { return auth.HashPassword([]byte(secret), "argon2id") })

func hashed(t *testing.T) string {
	t.Helper()
	h, err := hashOnce()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
