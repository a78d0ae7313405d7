package mochilog

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mochi-mqtt/server/v2/packets"
)

// topicMax bounds the topic a line quotes: a topic may be as long as a
// packet.
const topicMax = 256

// kindsMax bounds the errors remembered apart; further ones share a line
// a second.
const kindsMax = 64

// kinds remembers the second each kind of line was last let through.
type kinds struct {
	mu   sync.Mutex
	last map[string]int64 // kind -> Unix second
}

// once reports whether the line of kind at second now is the first of its
// kind that second.
func (k *kinds) once(kind string, now int64) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.last[kind]; !ok && len(k.last) >= kindsMax {
		kind = "" // the others
	}
	if k.last[kind] == now {
		return false
	}
	k.last[kind] = now
	return true
}

// packetError handles mochi's "error processing packet" line, which holds
// the whole packet ("pk"): a publish the ACL refused is dropped (the
// access hook logs and counts it), any other error is let through once a
// second per error, naming the packet's type and topic instead.
func (h quietHandler) packetError(ctx context.Context, r slog.Record) error {
	var (
		reason string
		pk     packets.Packet
		hasPk  bool
	)
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "error":
			reason = a.Value.String()
		case "pk":
			pk, hasPk = a.Value.Any().(packets.Packet)
		}
		return true
	})
	if reason == packets.ErrNotAuthorized.Reason || !h.errors.once(reason, r.Time.Unix()) {
		return nil
	}
	out := slog.NewRecord(r.Time, r.Level, "refused a packet and closed the connection (further errors of this kind this second are not logged)", r.PC)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "pk" {
			out.AddAttrs(a)
		}
		return true
	})
	if hasPk {
		out.AddAttrs(slog.String("packet", packets.PacketNames[pk.FixedHeader.Type]))
		if t := pk.TopicName; t != "" {
			if len(t) > topicMax {
				t = t[:topicMax] + "…"
			}
			out.AddAttrs(slog.String("topic", t))
		}
	}
	return h.Handler.Handle(ctx, out)
}
