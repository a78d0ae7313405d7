package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A start that fails says why on its last line and exits non-zero, with
// nothing above it claiming a start: no "started" line, no hooks added
// (nor stopped again), however far the start had come.
func TestStartupFailureIsTheLastLine(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	inUse := busy.Addr().String()
	empty := filepath.Join(t.TempDir(), "broken.geojson")
	if err := os.WriteFile(empty, []byte(`{"type":"FeatureCollection","features":[{"type":"Feature"`), 0o600); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	noDir := filepath.Join(t.TempDir(), "missing", "capture.jsonl")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"MQTT port in use", []string{"--mqtt-addr", inUse}, "address already in use"},
		{"WebSocket port in use", []string{"--ws-addr", inUse}, "address already in use"},
		{"HTTP port in use", []string{"--http-addr", inUse}, "address already in use"},
		{"broken fence file", []string{"--fences", empty}, empty},
		// Found after mochi and its hooks were set up.
		{"data dir a file", []string{"--data-dir", notDir}, notDir},
		{"capture in a missing directory", []string{"--capture", noDir}, noDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve", "--mqtt-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
				"--data-dir", t.TempDir(), "--fences", bundledFences}, tc.args...)
			p := runBin(t, nil, args...)
			if st := p.wait(2 * wait); st.Success() {
				t.Fatalf("exited 0, want a start-up error:\n%s", p.out)
			}
			out := strings.TrimSpace(p.out.String())
			last := out[strings.LastIndex(out, "\n")+1:]
			if !strings.Contains(last, tc.want) {
				t.Errorf("last line %q does not say %q:\n%s", last, tc.want, out)
			}
			for _, claim := range []string{"started", "added hook", "serving", "stopping hook", "server stopped"} {
				if strings.Contains(out, claim) {
					t.Errorf("a failed start logged %q:\n%s", claim, out)
				}
			}
		})
	}
}

// A normal shutdown with clients connected logs nothing that reads as an
// error: closing their connections is the server's doing.
func TestShutdownLogsNoClosedConnectionError(t *testing.T) {
	p := startServe(t, t.TempDir(), nil)
	dash := connect(t, p.mqtt, "dashboard")
	dash.Subscribe("geofence/#")
	connect(t, p.mqtt, "tracker")
	idle, err := net.Dial("tcp", p.mqtt) // connected, no CONNECT yet
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	if st := p.signal(syscall.SIGTERM, 2*wait); !st.Success() {
		t.Fatalf("SIGTERM: %v", st)
	}
	if out := p.out.String(); strings.Contains(out, "closed network connection") || strings.Contains(out, "level=ERROR") {
		t.Errorf("shutdown logged an error:\n%s", out)
	}
}
