// Package hooks holds edgefence's mochi-mqtt hooks: Telemetry turns
// tracker publishes into engine pings.
package hooks

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// Engine is what the hook needs of the evaluator: clamp and hand off.
type Engine interface {
	Ping(device string, pos *payload.Position, ingest time.Time) evaluator.Ping
	Submit(p *evaluator.Ping) error
}

// Rejects receives telemetry the hook refused, to publish on the reject
// topic. It is called from client goroutines.
type Rejects interface {
	Rejected(device, topic, reason, message string, body []byte)
}

// Telemetry is the hook that intercepts tracker publishes. It runs in the
// publishing client's goroutine, so it only decodes, validates and hands
// the ping to the engine without blocking.
type Telemetry struct {
	mqtt.HookBase
	filters []TelemetryFilter
	engine  Engine
	rejects Rejects
	m       *Metrics
	log     *slog.Logger
	maxSize int
	pool    sync.Pool // *payload.Decoder: one per concurrent publisher
	logged  [numReasons]atomic.Int64
}

// NewTelemetry returns the hook. maxSize is the payload limit in bytes
// (0: payload.DefaultMaxSize).
func NewTelemetry(filters []TelemetryFilter, engine Engine, rejects Rejects, m *Metrics, log *slog.Logger, maxSize int) *Telemetry {
	h := &Telemetry{filters: filters, engine: engine, rejects: rejects, m: m, log: log, maxSize: maxSize}
	h.pool.New = func() any { return &payload.Decoder{MaxSize: maxSize} }
	return h
}

// ID names the hook.
func (h *Telemetry) ID() string { return "edgefence-telemetry" }

// Provides says which hook events the hook handles.
func (h *Telemetry) Provides(b byte) bool { return b == mqtt.OnPublish || b == mqtt.OnPublishDropped }

// OnPublish decodes tracker telemetry and hands it to the engine. What is
// returned decides the packet's fate in mochi:
//   - nil: routed to ordinary subscribers, as any broker would;
//   - a reason code: an MQTT 5 QoS 1 publisher gets it in its PUBACK, and
//     the packet is not routed;
//   - CodeSuccessIgnore: acknowledged (QoS 1 and 2) but not routed, for
//     clients that cannot receive a reason code (QoS 0, MQTT 3.1.1, and
//     QoS 2, which mochi would answer with a PUBACK);
//   - ErrRejectPacket: dropped without an acknowledgement, so a 3.1.1 or
//     QoS 2 tracker sends it again after it reconnects.
func (h *Telemetry) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if cl.Net.Inline {
		return pk, nil // the server's own transitions: never fed back
	}
	for i := range h.filters {
		tf := &h.filters[i]
		id, ok, err := tf.match(pk.TopicName)
		if !ok {
			continue
		}
		h.m.Received.Inc()
		if err != nil {
			return pk, h.reject(cl, &pk, id, reasonDeviceID)
		}
		return pk, h.ingest(cl, &pk, tf, id)
	}
	return pk, nil
}

func (h *Telemetry) ingest(cl *mqtt.Client, pk *packets.Packet, tf *TelemetryFilter, id string) error {
	dec := h.pool.Get().(*payload.Decoder)
	pos, err := dec.Decode(pk.Payload, tf.Format)
	h.pool.Put(dec)
	if err != nil {
		if errors.Is(err, payload.Ignored) {
			h.m.Ignored.Inc()
			return nil // an OwnTracks event or waypoint: route it, do not evaluate it
		}
		return h.reject(cl, pk, id, reasonOf(err.(payload.Reason)))
	}
	ingest := time.Now() // the ingest instant: once, right after decoding
	pg := h.engine.Ping(id, &pos, ingest)
	if err := h.engine.Submit(&pg); err != nil {
		switch {
		case pk.FixedHeader.Qos == 0:
			h.m.Shed.Inc()
			return packets.CodeSuccessIgnore
		case pk.FixedHeader.Qos == 1 && cl.Properties.ProtocolVersion == 5:
			// Only at QoS 1: mochi answers a reason code with a PUBACK,
			// which a QoS 2 publisher (expecting PUBREC) cannot take.
			h.m.Refused.Inc()
			return packets.ErrQuotaExceeded // 0x97: the tracker retries later
		default:
			h.m.Refused.Inc()
			return packets.ErrRejectPacket
		}
	}
	return nil
}

// reject counts, reports and refuses a bad publish; it is never routed.
func (h *Telemetry) reject(cl *mqtt.Client, pk *packets.Packet, id string, r reason) error {
	h.m.Rejected[r].Inc()
	if h.rejects != nil {
		h.rejects.Rejected(id, pk.TopicName, r.String(), r.Error(), pk.Payload)
	}
	now := time.Now().Unix()
	// One log line per reason per second: a broken tracker fleet must not
	// flood the log; the counter has the total.
	if last := h.logged[r].Load(); last != now && h.logged[r].CompareAndSwap(last, now) {
		h.log.Warn("rejected telemetry (further rejections for this reason are only counted this second)",
			"reason", r.String(), "error", r.Error(), "device", id, "topic", pk.TopicName,
			"client", cl.ID, "payload", string(pk.Payload[:min(len(pk.Payload), 120)]))
	}
	if pk.FixedHeader.Qos == 1 && cl.Properties.ProtocolVersion == 5 { // not QoS 2: see ingest
		return packets.ErrPayloadFormatInvalid // 0x99
	}
	return packets.CodeSuccessIgnore
}

// OnPublishDropped counts messages mochi dropped because a subscriber's
// outbound queue was full.
func (h *Telemetry) OnPublishDropped(cl *mqtt.Client, pk packets.Packet) { h.m.Dropped.Inc() }

// reason is a payload.Reason or one of the hook's own.
type reason uint8

var reasonDeviceID = func() reason {
	var top payload.Reason
	for _, r := range payload.Reasons() {
		top = max(top, r)
	}
	return reason(top + 1)
}()

const numReasons = 32

func reasonOf(r payload.Reason) reason { return reason(r) }

func (r reason) String() string {
	if r == reasonDeviceID {
		return "device_id"
	}
	return payload.Reason(r).String()
}

func (r reason) Error() string {
	if r == reasonDeviceID {
		return "telemetry topic: " + ErrDeviceID.Error()
	}
	return payload.Reason(r).Error()
}
