package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/broker"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every wait for something the server should do.
const wait = 5 * time.Second

// Positions, checked against ../fences.geojson.
const (
	museumLat, museumLon = 52.52, 13.40 // inside only zone-museumsinsel
	outLat, outLon       = 52.50, 13.30 // inside no fence
)

func testLog() *slog.Logger {
	if os.Getenv("EDGEFENCE_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// testConfig is serve's defaults (the 500 ms hold included) on free
// loopback ports, the bundled fences, state in memory.
func testConfig(t *testing.T) broker.Config {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.MQTTAddr = "127.0.0.1:0"
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.Fences = filepath.Join("..", "fences.geojson")
	cfg.DataDir = ""
	// The fixtures jump kilometres in a second, which the speed gate (on by
	// default) sets aside; the gate has tests of its own.
	cfg.Engine.MaxSpeed = 0
	cfg.CloseTimeout = wait
	cfg.Log = testLog()
	return cfg
}

func start(t *testing.T, cfg broker.Config) *broker.Server {
	t.Helper()
	srv, err := broker.Start(cfg)
	if err != nil {
		t.Fatalf("broker.Start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return srv
}

// ping is a canonical telemetry payload stamped at ts.
func ping(lat, lon float64, ts time.Time) []byte {
	return fmt.Appendf(nil, `{"lat":%v,"lon":%v,"ts":%d}`, lat, lon, ts.UnixMilli())
}

const secret = "correct horse battery staple"

var (
	hashOnce sync.Once
	hashed   string
	hashErr  error
)

// writeUsers writes a users file of name, role pairs, all with secret.
func writeUsers(t *testing.T, nameRoles ...string) string {
	t.Helper()
	hashOnce.Do(func() { hashed, hashErr = auth.HashPassword([]byte(secret), "argon2id") })
	if hashErr != nil {
		t.Fatal(hashErr)
	}
	var b bytes.Buffer
	b.WriteString("users:\n")
	for i := 0; i+1 < len(nameRoles); i += 2 {
		fmt.Fprintf(&b, "  - username: %s\n    role: %s\n    password: %q\n", nameRoles[i], nameRoles[i+1], hashed)
	}
	path := filepath.Join(t.TempDir(), "users.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// getJSON GETs url into v and returns the status.
func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	c := http.Client{Timeout: wait}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("%s: %v\n%s", url, err, body)
		}
	}
	return resp.StatusCode
}
