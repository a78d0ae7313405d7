package hooks

import (
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Claims reports whether Take would handle a publish on topic: telemetry
// that no subscription could receive. It changes nothing, so a publish it
// does not claim can go to mochi as read.
//
// Claims and Take are the hook's half of the broker's direct ingest, which
// reads trackers' pings off their connections before mochi parses them:
// mochi's path for a publish (its decode into an 800-byte packet copied
// through every hook, the copies of the bytes, the per-publish clock and
// counters) costs more than the whole engine, and its depth doubles each
// connection's reader stack.
func (h *Telemetry) Claims(topic string) bool {
	if h.routes.routed() {
		return false
	}
	for i := range h.filters {
		if _, ok, _ := h.filters[i].match(topic); ok {
			return true
		}
	}
	return false
}

// Take handles a QoS 0 or 1 publish that Claims claimed, from a client with
// no subscriptions, as mochi and OnPublish would: decoded, validated and
// handed to the engine, and acknowledged with the PUBACK mochi would have
// written (or, like a publish OnPublish drops, not at all). The caller has
// done the rest of mochi's checks (the ACL, the rate limit, the packet's
// validity). topic may be kept (the device id is cut from it); body is
// not kept past the call.
func (h *Telemetry) Take(cl *mqtt.Client, qos byte, packetID uint16, topic string, body []byte) {
	id, pos, ingest, out := h.Read(topic, body, cl.ID)
	v5 := qos == 1 && cl.Properties.ProtocolVersion == 5
	switch out {
	case Accepted:
		switch h.submit(cl, qos, &pos, id, ingest) {
		case errQuotaExceeded:
			h.acks.refuse(cl, packetID, packets.ErrQuotaExceeded)
			return
		case errRejectPacket:
			return // no acknowledgement: the tracker sends it again
		}
	case Rejected:
		if v5 {
			h.acks.refuse(cl, packetID, packets.ErrPayloadFormatInvalid)
			return
		}
	}
	if qos == 1 {
		h.acks.write(cl, packetID)
	}
}
