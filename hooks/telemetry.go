// Package hooks holds edgefence's mochi-mqtt hooks: Telemetry takes
// tracker publishes to the engine through the ingest path, Access
// authenticates and authorises, RateLimit limits publishes by device,
// Limits announces the broker's limits in CONNACK, and Admin applies fence
// sets published by an admin.
package hooks

import (
	"log/slog"
	"sync/atomic"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/hooks/puback"
	"github.com/edgefence/edgefence/ingest"
)

// Telemetry is the hook that takes tracker publishes to the engine. It
// runs in the publishing client's goroutine, so it only decodes, validates
// and hands the ping to the engine without blocking (ingest.Reader).
type Telemetry struct {
	mqtt.HookBase
	r       *ingest.Reader
	m       *ingest.Metrics
	log     *slog.Logger
	dropped atomic.Int64 // second of the last dropped-message log line
	routes  routing
	acks    *puback.Queues // deferred PUBACKs (DeferAcks), else nil
}

// NewTelemetry returns the hook in front of r.
func NewTelemetry(r *ingest.Reader, log *slog.Logger) *Telemetry {
	h := &Telemetry{r: r, m: r.Metrics(), log: log}
	for _, tf := range r.Filters() {
		h.routes.filters = append(h.routes.filters, ingest.Unshare(tf.Filter))
	}
	return h
}

// DeferAcks has a forwarding reader's QoS 1 pings acknowledged when the
// ping stream answers, in each connection's order, while the connection's
// reader goes on; at most max per connection wait for their answer, and
// the reader waits for room beyond that. Without it (or a forwarder that
// cannot, ingest.AsyncForwarder), the reader waits for each answer before
// it reads the next packet: one ping per round trip to the stream.
func (h *Telemetry) DeferAcks(max int) {
	if h.r.ForwardsAsync() && max > 0 {
		h.acks = &puback.Queues{Max: max}
	}
}

// ID names the hook.
func (h *Telemetry) ID() string { return "edgefence-telemetry" }

// Provides says which hook events the hook handles.
func (h *Telemetry) Provides(b byte) bool {
	switch b {
	case mqtt.OnPublish, mqtt.OnPublishDropped, mqtt.OnSubscribed, mqtt.OnUnsubscribed, mqtt.OnDisconnect:
		return true
	}
	return false
}

// Outcomes of a publish, as mochi reads them. Pre-boxed: converting a
// packets.Code to an error allocates on every return.
var (
	errFormatInvalid error = packets.ErrPayloadFormatInvalid // 0x99
	errQuotaExceeded error = packets.ErrQuotaExceeded        // 0x97
	errRejectPacket  error = packets.ErrRejectPacket
	errIgnore        error = packets.CodeSuccessIgnore
	errNotAuthorized error = packets.ErrNotAuthorized // 0x87
)

// OnPublishInPlace decodes tracker telemetry and hands it to the engine. What is
// returned decides the packet's fate in mochi:
//   - nil: routed to ordinary subscribers, as any broker would;
//   - the packet marked Ignore (what CodeSuccessIgnore does, without an
//     error that mochi's errors.Is calls would box twice): acknowledged
//     (QoS 1 and 2) but not routed — for a valid ping when no subscription
//     could receive telemetry, and for a refused one whose client cannot
//     receive a reason code (QoS 0, MQTT 3.1.1, and QoS 2, which mochi
//     would answer with a PUBACK);
//   - a reason code: an MQTT 5 QoS 1 publisher gets it in its PUBACK, and
//     the packet is not routed (0x99 for a bad payload, 0x87 for a body
//     that names a device other than the topic's);
//   - ErrRejectPacket: dropped without an acknowledgement, so a 3.1.1 or
//     QoS 2 tracker sends it again after it reconnects.
func (h *Telemetry) OnPublishInPlace(cl *mqtt.Client, pk *packets.Packet) error {
	if cl.Net.Inline {
		return nil // the transition publisher's own messages: never fed back
	}
	id, pos, at, out := h.r.Read(pk.TopicName, pk.Payload, cl.ID)
	if h.acks != nil && pk.FixedHeader.Qos == 1 {
		if out == ingest.Accepted && !pk.FixedHeader.Retain && !h.routes.routed() {
			h.forwardDeferred(cl, pk, id, pos)
			return errRejectPacket // mochi neither acknowledges nor routes it
		}
		// mochi acknowledges this one when the hook returns: not before
		// the PUBACKs of the pings before it.
		h.acks.WaitIdle(cl)
	}
	switch out {
	case ingest.Accepted:
		var ref ingest.Refusal
		if h.r.Forwards() {
			// serve --cluster: stored in the ping stream before the
			// PUBACK, which mochi sends once this returns. A copy: the
			// engine's path must not have pos escape to the heap.
			p := pos
			ref = h.r.Forward(pk.FixedHeader.Qos, cl.Properties.ProtocolVersion == 5, pk.TopicName, pk.Payload, &p, id)
		} else {
			ref = h.r.Submit(pk.FixedHeader.Qos, cl.Properties.ProtocolVersion == 5, &pos, id, at)
		}
		switch ref {
		case ingest.Taken:
			if !pk.FixedHeader.Retain && !h.routes.routed() {
				pk.Ignore = true
			}
			return nil
		case ingest.Shed:
			pk.Ignore = true
			return nil
		case ingest.Retry:
			return errQuotaExceeded // 0x97: the tracker retries later
		default:
			return errRejectPacket
		}
	case ingest.Rejected, ingest.Forbidden:
		// Never routed. Not at QoS 2: mochi answers a reason code with a
		// PUBACK, which a QoS 2 publisher (expecting PUBREC) cannot take.
		if pk.FixedHeader.Qos == 1 && cl.Properties.ProtocolVersion == 5 {
			if out == ingest.Forbidden {
				return errNotAuthorized
			}
			return errFormatInvalid
		}
		pk.Ignore = true
		return nil
	}
	return nil
}

// forwardDeferred forwards an accepted QoS 1 ping and queues its PUBACK,
// answered when the ping stream is: success once stored; refused, 0x97 to
// an MQTT 5 tracker and no PUBACK to a 3.1.1 one, as when the hook waits.
func (h *Telemetry) forwardDeferred(cl *mqtt.Client, pk *packets.Packet, id string, pos payload.Position) {
	a := h.acks.Of(cl)
	seq := a.Add(pk.PacketID)
	p := pos // the answer reads it later
	h.r.ForwardAsync(cl.Properties.ProtocolVersion == 5, pk.TopicName, pk.Payload, &p, id, func(ref ingest.Refusal) {
		switch ref {
		case ingest.Taken:
			a.Answer(seq, true, packets.CodeSuccess.Code)
		case ingest.Retry:
			a.Answer(seq, true, packets.ErrQuotaExceeded.Code)
		default:
			a.Answer(seq, false, 0)
		}
	})
}

// OnDisconnect forgets the connection's deferred PUBACKs.
func (h *Telemetry) OnDisconnect(cl *mqtt.Client, _ error, _ bool) {
	if h.acks != nil {
		h.acks.Drop(cl)
	}
}

// OnPublish is OnPublishInPlace on a copy, for mochi's Hook interface;
// mochi calls OnPublishInPlace, which keeps the packet off the reader's
// stack (mochi patch 0024).
func (h *Telemetry) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	err := h.OnPublishInPlace(cl, &pk)
	return pk, err
}

// OnPublishDropped counts messages mochi dropped because a subscriber's
// outbound queue was full, and logs one line per second at most.
func (h *Telemetry) OnPublishDropped(cl *mqtt.Client, pk packets.Packet) {
	h.m.Dropped.Inc()
	if now, last := time.Now().Unix(), h.dropped.Load(); last != now && h.dropped.CompareAndSwap(last, now) {
		h.log.Warn("subscriber too slow: its outbound queue is full and a message was dropped (further drops this second are only counted in edgefence_shed_total{stage=\"subscriber\"})",
			"client", cl.ID, "topic", pk.TopicName)
	}
}
