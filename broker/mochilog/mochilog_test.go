package mochilog

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// A tracker that drops its connection without DISCONNECT (a cellular
// handover) made mochi log an empty WARN line, every time: hundreds of
// trackers flapping flooded the log with lines that named nothing. They
// come out once a second, saying what happened.
func TestQuietHandlerNamesAndLimitsDroppedConnections(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(Quiet(slog.NewTextHandler(&buf, nil))).With("component", "mqtt")
	at := time.Unix(1_800_000_000, 0)
	for i := range 50 {
		r := slog.NewRecord(at.Add(time.Duration(i)*10*time.Millisecond), slog.LevelWarn, "", 0)
		r.AddAttrs(slog.Any("error", io.EOF))
		_ = log.Handler().Handle(t.Context(), r)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("50 dropped connections within 0.5 s logged %d lines, want 1:\n%s", len(lines), buf.String())
	}
	if !strings.Contains(lines[0], "client connection ended") || !strings.Contains(lines[0], "error=EOF") {
		t.Errorf("the line does not say what happened: %s", lines[0])
	}
}

// mochi logs each failed Accept of a listener (patch 0016), up to 200 a
// second while its pause is short; acceptwatch logs them once a second
// with what to do, so mochi's lines are dropped.
func TestQuietHandlerDropsAcceptRetries(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(Quiet(slog.NewTextHandler(&buf, nil))).With("component", "mqtt")
	log.Warn("accept failed; retrying", "error", "accept tcp 127.0.0.1:1883: accept4: too many open files", "delay", "5ms")
	if buf.Len() != 0 {
		t.Errorf("mochi's accept retry was logged: %s", buf.String())
	}
}
