package broker

import (
	"sync/atomic"
	"unicode/utf8"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/mochi-mqtt/server/v2/system"

	"github.com/edgefence/edgefence/hooks"
)

// ingest takes trackers' pings off their connections before mochi reads
// them: a connection's reader finds each whole packet in what it read,
// and a PUBLISH of telemetry that nobody subscribes to goes straight to the
// telemetry hook, which acknowledges it as mochi would have. mochi's own
// path for a publish costs about as much CPU as the whole engine (it
// decodes into an 800-byte packet that is copied through every hook,
// copies the bytes twice, reads the clock and updates shared counters),
// and its depth — 17 KiB of frames before the first hook — doubles each
// reader's stack.
// Everything else, and every publish that is not plainly an unrouted ping
// from an authorised client in good standing, goes to mochi unchanged and
// in order.
type ingest struct {
	tel       *hooks.Telemetry
	access    *hooks.Access
	rate      *hooks.RateLimit // nil: no rate limit
	info      *system.Info     // mochi's $SYS counters, counted as mochi would
	maxPacket uint32           // mochi's MaximumPacketSize; 0: none
	taken     *metrics.Counter // edgefence_pings_direct_total
}

// ingestHook hands each connection its client once mochi has admitted it:
// from then on its reader may take pings itself.
type ingestHook struct {
	mqtt.HookBase
	in *ingest
}

// ID names the hook.
func (h *ingestHook) ID() string { return "edgefence-ingest" }

// Provides says which hook events the hook handles.
func (h *ingestHook) Provides(b byte) bool { return b == mqtt.OnSessionEstablished }

// OnSessionEstablished runs on the connection's reader, after CONNACK and
// before mochi reads the next packet.
func (h *ingestHook) OnSessionEstablished(cl *mqtt.Client, _ packets.Packet) {
	if c, ok := cl.Net.Conn.(*coalescingConn); ok && c.frames != nil {
		c.frames.cl = cl
		c.frames.in = h.in
		c.frames.keepalive = cl.State.Keepalive
	}
}

// take takes pk if it is a ping the telemetry hook claims, from a client in
// good standing: every check mochi would make first is made here, and a
// packet that fails one is mochi's to refuse, count and log.
func (in *ingest) take(f *frames, pk []byte, hdr int) bool {
	cl := f.cl
	b0 := pk[0]
	qos := b0 >> 1 & 3
	// QoS 2, retained and malformed publishes, and duplicates at QoS 0 (a
	// protocol error), are mochi's.
	if b0>>4 != packets.Publish || qos > 1 || b0&1 != 0 || qos == 0 && b0&8 != 0 {
		return false
	}
	if in.maxPacket > 0 && uint32(len(pk)-hdr+1) > in.maxPacket {
		return false // mochi refuses it (its own measure of the size)
	}
	body := pk[hdr:]
	if len(body) < 2 {
		return false
	}
	n := int(body[0])<<8 | int(body[1])
	if n == 0 || 2+n > len(body) {
		return false
	}
	name := body[2 : 2+n]
	rest := body[2+n:]
	var id uint16
	if qos == 1 {
		if len(rest) < 2 {
			return false
		}
		id = uint16(rest[0])<<8 | uint16(rest[1])
		if id == 0 {
			return false
		}
		rest = rest[2:]
	}
	if cl.Properties.ProtocolVersion == 5 {
		// Any property (a topic alias, user properties, an expiry) is
		// mochi's to read.
		if len(rest) == 0 || rest[0] != 0 {
			return false
		}
		rest = rest[1:]
	}
	if !plainTopic(name) {
		return false
	}
	// A client with subscriptions or messages in flight to it has writes
	// of mochi's in its queue: its PUBACKs go through mochi to keep their
	// order.
	if cl.State.Subscriptions.Len() > 0 || cl.State.Inflight.Len() > 0 {
		return false
	}
	// The engine keeps the device id cut from the topic: the topic is
	// interned per connection, not a view of the read buffer.
	topic := f.topic(name)
	m, ok := in.tel.Claims(topic)
	if !ok || !in.access.OnACLCheck(cl, topic, true) {
		return false
	}
	if in.rate != nil && !in.rate.Admit(cl) {
		return false // refused, counted and logged by the rate-limit hook
	}
	atomic.AddInt64(&in.info.BytesReceived, int64(len(pk)))
	atomic.AddInt64(&in.info.PacketsReceived, 1)
	atomic.AddInt64(&in.info.MessagesReceived, 1)
	in.taken.Inc()
	in.tel.Take(cl, m, qos, id, topic, rest)
	return true
}

// plainTopic reports whether a topic name is valid UTF-8 with no
// wildcard, no NUL and no leading '$': a name mochi would route, and no
// reserved one.
func plainTopic(b []byte) bool {
	if len(b) == 0 || b[0] == '$' {
		return false
	}
	for _, c := range b {
		if c == '+' || c == '#' || c == 0 {
			return false
		}
	}
	return utf8.Valid(b)
}
