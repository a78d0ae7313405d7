package hooks

import (
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Claims reports whether Take would handle a publish on topic, telemetry
// that no subscription could receive, and returns the match Take needs.
// It changes nothing, so a publish it does not claim can go to mochi as
// read. Claims and Take are the hook's half of the broker's direct ingest
// (broker/ingest.go).
func (h *Telemetry) Claims(topic string) (Match, bool) {
	if h.routes.routed() {
		return Match{}, false
	}
	return h.match(topic)
}

// Take handles a QoS 0 or 1 publish on topic, which Claims matched (m),
// from a client with no subscriptions, as mochi and OnPublish would:
// decoded, validated and handed to the engine, and acknowledged with the PUBACK mochi would have
// written (or, like a publish OnPublish drops, not at all). The caller has
// done the rest of mochi's checks (the ACL, the rate limit, the packet's
// validity). topic, and so m's device id cut from it, may be kept; body is
// not kept past the call.
func (h *Telemetry) Take(cl *mqtt.Client, m Match, qos byte, packetID uint16, topic string, body []byte) {
	id, pos, ingest, out := h.read(m, topic, body, cl.ID)
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
