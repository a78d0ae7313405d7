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
	answer, _ := h.Handle(m, topic, body, cl.ID, qos, cl.Properties.ProtocolVersion == 5)
	switch answer {
	case AnswerAck:
		if qos == 1 {
			h.acks.write(cl, packetID)
		}
	case AnswerQuota:
		h.acks.refuse(cl, packetID, packets.ErrQuotaExceeded)
	case AnswerInvalid:
		h.acks.refuse(cl, packetID, packets.ErrPayloadFormatInvalid)
	}
}

// Answer is what a publisher of a ping Handle handled is to be answered.
type Answer byte

// Answers. Only an MQTT 5 publisher at QoS 1 is given a reason code;
// others are acknowledged or, for a ping the engine refused at QoS 1, not
// at all.
const (
	AnswerAck     Answer = iota // a PUBACK with reason 0 (QoS 1); nothing at QoS 0
	AnswerNone                  // no acknowledgement: the tracker sends it again
	AnswerQuota                 // PUBACK 0x97: the engine is full, retry later
	AnswerInvalid               // PUBACK 0x99: the payload was refused
)

// Handle decodes, validates and hands to the engine a ping on topic, which
// Claims or a match of the same telemetry filters matched (m), and says
// how to answer its publisher: the transport-neutral half of Take, for
// listeners that write their own acknowledgements. client names the
// publisher in logs; v5 is whether it speaks MQTT 5. route is whether
// subscribers to telemetry (see Routed) are to get the publish, as
// OnPublish lets mochi route it: not when it was refused or shed.
func (h *Telemetry) Handle(m Match, topic string, body []byte, client string, qos byte, v5 bool) (a Answer, route bool) {
	id, pos, ingest, out := h.read(m, topic, body, client)
	switch out {
	case Accepted:
		switch h.submit(qos, v5, &pos, id, ingest) {
		case nil:
			return AnswerAck, true
		case errQuotaExceeded:
			return AnswerQuota, false
		case errRejectPacket:
			return AnswerNone, false
		}
		return AnswerAck, false // shed at QoS 0
	case Rejected:
		if qos == 1 && v5 {
			return AnswerInvalid, false
		}
		return AnswerAck, false
	}
	return AnswerAck, true // an OwnTracks event, not a position
}

// Match matches topic against the telemetry filters, whether or not
// anyone subscribes to telemetry (Claims: only when nobody does).
func (h *Telemetry) Match(topic string) (Match, bool) { return h.match(topic) }

// Routed reports whether a subscription could receive telemetry: a ping
// must then be routed to subscribers as well as evaluated.
func (h *Telemetry) Routed() bool { return h.routes.routed() }
