package mochilog

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
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

// mochi logged every packet it refused whole, payload included, once per
// packet: a device retrying a refused publish wrote 118 MB in 5 s. A
// refusal by the ACL is not logged here (the access hook logs and counts
// it); any other error is logged once a second per error, naming the
// packet's type and topic, never its payload.
func TestQuietHandlerLimitsPacketErrorsAndDropsThePacket(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(Quiet(slog.NewTextHandler(&buf, nil))).With("component", "mqtt")
	at := time.Unix(1_800_000_000, 0)
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1},
		TopicName: "devices/truck-2/telemetry", Payload: bytes.Repeat([]byte("SECRET"), 512)}
	for i := range 100 {
		for _, err := range []error{packets.ErrNotAuthorized, packets.ErrProtocolViolation, packets.ErrPacketTooLarge} {
			r := slog.NewRecord(at.Add(time.Duration(i)*5*time.Millisecond), slog.LevelWarn, "error processing packet", 0)
			r.AddAttrs(slog.Any("error", err), slog.String("client", "truck-1"), slog.Any("pk", pk))
			_ = log.Handler().Handle(t.Context(), r)
		}
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("300 packet errors of 3 kinds within 0.5 s logged %d lines, want 2 (one a kind, none for the ACL's):\n%.3000s", len(lines), buf.String())
	}
	for _, l := range lines {
		if strings.Contains(l, "SECRET") || strings.Contains(l, "not authorized") {
			t.Errorf("line holds the payload or an ACL refusal: %.300s", l)
		}
		if !strings.Contains(l, "client=truck-1") || !strings.Contains(l, "topic=devices/truck-2/telemetry") || !strings.Contains(l, "packet=Publish") {
			t.Errorf("line does not name the client, topic and packet: %s", l)
		}
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

// A shutdown closes every client's connection: mochi's lines on them
// carry "use of closed network connection", which is the server's own
// doing, not an error to warn about.
func TestQuietHandlerDropsConnectionsClosedHere(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(Quiet(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))).With("component", "mqtt")
	closed := fmt.Errorf("read tcp 127.0.0.1:1883->127.0.0.1:5000: %w", net.ErrClosed)
	log.Warn("", "error", closed, "listener", "tcp")
	log.Debug("client disconnected", "error", closed, "client", "truck-1")
	out := buf.String()
	if strings.Contains(out, "closed network connection") || strings.Contains(out, "level=WARN") {
		t.Errorf("a connection closed by the server logged as an error:\n%s", out)
	}
	if !strings.Contains(out, "client disconnected") || !strings.Contains(out, "truck-1") {
		t.Errorf("the debug line on the client's disconnection is gone:\n%s", out)
	}
}
