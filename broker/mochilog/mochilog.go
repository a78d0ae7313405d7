// Package mochilog keeps mochi's per-packet log lines from flooding
// edgefence's log: what edgefence counts and logs itself is dropped, and
// what only mochi says is named and let through once a second.
package mochilog

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
)

// quietHandler keeps mochi's per-packet log lines from flooding the log:
//   - "publish packet error"/"rejected" (one per publish a hook refuses) are
//     dropped: the telemetry hook logs refusals itself, rate-limited, and
//     counts every one;
//   - "error processing packet" (one per packet mochi refuses and closes the
//     connection on, with the whole packet, payload included: a 3.1.1
//     device retrying a refused QoS 1 publish wrote 118 MB in 5 s) is
//     dropped for a publish the ACL refused (the access hook logs and
//     counts those), and otherwise let through once a second per error,
//     naming the client, packet type and topic, never the packet;
//   - "client store quota reached" (one per outbound QoS 1 message mochi
//     drops because a subscriber has --max-inflight messages unacknowledged)
//     is let through once per second, naming the metric that counts them all;
//   - a connection's end on a refused login (the error "bad username or
//     password", or "connection not open" when the access hook answered
//     the CONNECT itself) is dropped: the access hook logs refused logins
//     once a second and counts them all;
//   - "accept failed; retrying" (one per failed Accept of an MQTT
//     listener, mochi patch 0016) is dropped: acceptwatch logs it once a
//     second, saying what to do, and counts every one;
//   - a connection's end because this side closed it (shutdown, a session
//     taken over: "use of closed network connection") is dropped, and the
//     debug line "client disconnected" loses that error: no client did
//     anything wrong;
//   - any other connection's end with an error (mochi's line has no
//     message: a tracker dropping off without DISCONNECT, a reset, a
//     malformed packet) is named and let through once per second.
type quietHandler struct {
	slog.Handler
	quota  *atomic.Int64 // Unix second of the last quota line let through
	ended  *atomic.Int64 // Unix second of the last connection-end line
	errors *kinds        // packet errors, by error
}

// Quiet wraps the handler mochi's logger writes to.
func Quiet(h slog.Handler) slog.Handler {
	return quietHandler{Handler: h, quota: new(atomic.Int64), ended: new(atomic.Int64), errors: &kinds{last: map[string]int64{}}}
}

// once reports whether the line of second now is the first since *last.
func once(last *atomic.Int64, now int64) bool {
	l := last.Load()
	return l != now && last.CompareAndSwap(l, now)
}

func (h quietHandler) Handle(ctx context.Context, r slog.Record) error {
	switch r.Message {
	case "publish packet error", "publish packet rejected", "accept failed; retrying":
		return nil
	case "error processing packet":
		return h.packetError(ctx, r)
	case "":
		if refusedLogin(r) || closedHere(r) || !once(h.ended, r.Time.Unix()) {
			return nil
		}
		r = r.Clone()
		r.Message = "client connection ended with an error (its will, if any, is sent; further ends this second are not logged)"
	case "client disconnected":
		if closedHere(r) { // the server's doing: not an error to report
			r = withoutError(r)
		}
	case "client store quota reached":
		if !once(h.quota, r.Time.Unix()) {
			return nil
		}
		r = r.Clone()
		r.Message = "subscriber too slow: it has --max-inflight QoS 1 messages unacknowledged, so a message to it was dropped (further drops this second are only counted in edgefence_shed_total{stage=\"subscriber_inflight\"})"
	}
	return h.Handler.Handle(ctx, r)
}

// refusedLogin reports whether r is mochi's line on a connection that
// ended with its login refused.
func refusedLogin(r slog.Record) (refused bool) {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "error" {
			s := a.Value.String()
			refused = s == "bad username or password" || strings.HasSuffix(s, "send ack: connection not open")
			return false
		}
		return true
	})
	return refused
}

// closedHere reports whether r is mochi's line on a connection that
// ended because this side closed it.
func closedHere(r slog.Record) (closed bool) {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "error" {
			return true
		}
		if err, ok := a.Value.Any().(error); ok {
			closed = errors.Is(err, net.ErrClosed)
		} else {
			closed = strings.HasSuffix(a.Value.String(), net.ErrClosed.Error())
		}
		return false
	})
	return closed
}

// withoutError is r without its error attribute.
func withoutError(r slog.Record) slog.Record {
	out := slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "error" {
			out.AddAttrs(a)
		}
		return true
	})
	return out
}

func (h quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h.Handler.WithAttrs(as), h.quota, h.ended, h.errors}
}

func (h quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h.Handler.WithGroup(name), h.quota, h.ended, h.errors}
}
