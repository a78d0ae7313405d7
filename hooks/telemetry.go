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
	direct  *evaluator.Engine // engine, when it is one: calls through Engine make each ping escape to the heap
	rejects Rejects
	m       *Metrics
	log     *slog.Logger
	maxSize int
	pool    sync.Pool // *payload.Decoder: one per concurrent publisher
	logged  [numReasons]atomic.Int64
	dropped atomic.Int64 // second of the last dropped-message log line
	routes  routing
}

// NewTelemetry returns the hook. maxSize is the payload limit in bytes
// (0: payload.DefaultMaxSize).
func NewTelemetry(filters []TelemetryFilter, engine Engine, rejects Rejects, m *Metrics, log *slog.Logger, maxSize int) *Telemetry {
	h := &Telemetry{filters: filters, engine: engine, rejects: rejects, m: m, log: log, maxSize: maxSize}
	h.direct, _ = engine.(*evaluator.Engine)
	for _, tf := range filters {
		h.routes.filters = append(h.routes.filters, unshare(tf.Filter))
	}
	h.pool.New = func() any { return &payload.Decoder{MaxSize: maxSize} }
	return h
}

// ID names the hook.
func (h *Telemetry) ID() string { return "edgefence-telemetry" }

// Provides says which hook events the hook handles.
func (h *Telemetry) Provides(b byte) bool {
	switch b {
	case mqtt.OnPublish, mqtt.OnPublishDropped, mqtt.OnSubscribed, mqtt.OnUnsubscribed:
		return true
	}
	return false
}

// Outcome is what Read made of a publish.
type Outcome uint8

// Outcomes of Read.
const (
	// NotTelemetry: no telemetry filter matches the topic.
	NotTelemetry Outcome = iota
	// Accepted: a valid position, to be clamped and submitted.
	Accepted
	// Ignored: an OwnTracks message that is not a location; routed, not evaluated.
	Ignored
	// Rejected: malformed or out of range, or a bad device id; already
	// counted, reported on the reject topic and logged.
	Rejected
)

// Read is the transport-neutral part of OnPublish, shared with the bridge:
// it matches topic against the telemetry filters, decodes and validates
// body, and counts, reports and logs what it refuses. client names the
// publisher in the log. For an Accepted publish it returns the device id,
// the position and the ingest instant, taken once, right after decoding.
func (h *Telemetry) Read(topic string, body []byte, client string) (id string, pos payload.Position, ingest time.Time, out Outcome) {
	if m, ok := h.match(topic); ok {
		return h.read(m, topic, body, client)
	}
	return "", pos, ingest, NotTelemetry
}

// topicMatch is a telemetry topic matched: its filter and device id.
type topicMatch struct {
	tf  *TelemetryFilter
	id  string
	err error // ErrDeviceID: the id level is empty or too long
}

// match matches topic against the telemetry filters, in order.
func (h *Telemetry) match(topic string) (topicMatch, bool) {
	for i := range h.filters {
		if id, ok, err := h.filters[i].match(topic); ok {
			return topicMatch{tf: &h.filters[i], id: id, err: err}, true
		}
	}
	return topicMatch{}, false
}

// read is Read for a topic that matched m.
func (h *Telemetry) read(m topicMatch, topic string, body []byte, client string) (id string, pos payload.Position, ingest time.Time, out Outcome) {
	h.m.Received.Inc()
	if m.err != nil {
		h.reject(client, topic, body, m.id, reasonDeviceID)
		return m.id, pos, ingest, Rejected
	}
	dec := h.pool.Get().(*payload.Decoder)
	pos, err := dec.Decode(body, m.tf.Format)
	h.pool.Put(dec)
	if err != nil {
		if errors.Is(err, payload.Ignored) {
			h.m.Ignored.Inc()
			return m.id, pos, ingest, Ignored // an OwnTracks event or waypoint
		}
		h.reject(client, topic, body, m.id, reasonOf(err.(payload.Reason)))
		return m.id, pos, ingest, Rejected
	}
	return m.id, pos, time.Now(), Accepted
}

// Outcomes of a publish, as mochi reads them. Pre-boxed: converting a
// packets.Code to an error allocates on every return.
var (
	errFormatInvalid error = packets.ErrPayloadFormatInvalid // 0x99
	errQuotaExceeded error = packets.ErrQuotaExceeded        // 0x97
	errRejectPacket  error = packets.ErrRejectPacket
	errIgnore        error = packets.CodeSuccessIgnore
)

// OnPublish decodes tracker telemetry and hands it to the engine. What is
// returned decides the packet's fate in mochi:
//   - nil: routed to ordinary subscribers, as any broker would;
//   - the packet marked Ignore (what CodeSuccessIgnore does, without an
//     error that mochi's errors.Is calls would box twice): acknowledged
//     (QoS 1 and 2) but not routed — for a valid ping when no subscription
//     could receive telemetry, and for a refused one whose client cannot
//     receive a reason code (QoS 0, MQTT 3.1.1, and QoS 2, which mochi
//     would answer with a PUBACK);
//   - a reason code: an MQTT 5 QoS 1 publisher gets it in its PUBACK, and
//     the packet is not routed;
//   - ErrRejectPacket: dropped without an acknowledgement, so a 3.1.1 or
//     QoS 2 tracker sends it again after it reconnects.
func (h *Telemetry) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if cl.Net.Inline {
		return pk, nil // the transition publisher's own messages: never fed back
	}
	id, pos, ingest, out := h.Read(pk.TopicName, pk.Payload, cl.ID)
	switch out {
	case Accepted:
		err := h.submit(pk.FixedHeader.Qos, cl.Properties.ProtocolVersion == 5, &pos, id, ingest)
		if err == errIgnore || err == nil && !pk.FixedHeader.Retain && !h.routes.routed() {
			pk.Ignore = true
			return pk, nil
		}
		return pk, err
	case Rejected:
		// Never routed. Not at QoS 2: mochi answers a reason code with a
		// PUBACK, which a QoS 2 publisher (expecting PUBREC) cannot take.
		if pk.FixedHeader.Qos == 1 && cl.Properties.ProtocolVersion == 5 {
			return pk, errFormatInvalid
		}
		pk.Ignore = true
		return pk, nil
	}
	return pk, nil
}

// submit hands the ping to the engine; when the engine refuses it, it
// returns what OnPublish answers (errIgnore: shed, acknowledged).
func (h *Telemetry) submit(qos byte, v5 bool, pos *payload.Position, id string, ingest time.Time) error {
	var err error
	if h.direct != nil {
		pg := h.direct.Ping(id, pos, ingest)
		err = h.direct.Submit(&pg)
	} else {
		// Only this branch allocates: the interface calls leak their
		// arguments, so copies are made here.
		p := *pos
		pg := h.engine.Ping(id, &p, ingest)
		err = h.engine.Submit(&pg)
	}
	if err != nil {
		switch {
		case qos == 0:
			h.m.Shed.Inc()
			return errIgnore
		case qos == 1 && v5:
			// Only at QoS 1: see OnPublish.
			h.m.Refused.Inc()
			return errQuotaExceeded // 0x97: the tracker retries later
		default:
			h.m.Refused.Inc()
			return errRejectPacket
		}
	}
	return nil
}

// reject counts, reports and logs a bad publish.
func (h *Telemetry) reject(client, topic string, body []byte, id string, r reason) {
	h.m.Rejected[r].Inc()
	if h.rejects != nil {
		h.rejects.Rejected(id, topic, r.String(), r.Error(), body)
	}
	now := time.Now().Unix()
	// One log line per reason per second: a broken tracker fleet must not
	// flood the log; the counter has the total.
	if last := h.logged[r].Load(); last != now && h.logged[r].CompareAndSwap(last, now) {
		h.log.Warn("rejected telemetry (further rejections for this reason are only counted this second)",
			"reason", r.String(), "error", r.Error(), "device", id, "topic", topic,
			"client", client, "payload", string(body[:min(len(body), 120)]))
	}
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
