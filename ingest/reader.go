package ingest

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/evaluator/payload/lorawan"
	"github.com/edgefence/edgefence/evaluator/sharded"
)

// Rejects receives telemetry the reader refused, to publish on the reject
// topic. It is called from the publishers' goroutines.
type Rejects interface {
	Rejected(device, topic, reason, message string, body []byte)
}

// Reader turns a telemetry publish (topic and body, from any transport)
// into an engine ping: it matches the topic against the telemetry
// filters, decodes and validates the body, and counts, reports and logs
// what it refuses. It is safe for concurrent use and runs in the
// publisher's goroutine, so it never blocks.
type Reader struct {
	filters []TelemetryFilter
	// engine is the concrete engine, not an interface: arguments of an
	// interface call escape, and each ping would be allocated.
	engine  *sharded.Engine
	fwd     Forwarder      // instead of engine: serve --cluster
	afwd    AsyncForwarder // fwd, when it forwards without waiting
	tap     func(engine.Ping)
	rejects Rejects
	m       *Metrics
	log     *slog.Logger
	pool    sync.Pool // *decoders: one per concurrent publisher
	frames  *frames   // LoRaWAN frame counters seen, per device
	logged  [numReasons]atomic.Int64
}

// decoders are one publisher's decoders.
type decoders struct {
	json payload.Decoder
	lora lorawan.Decoder
}

// NewReader returns a reader that submits to eng (nil for a reader that
// only reads: Submit must not be called then). maxSize is the payload
// limit in bytes (0: payload.DefaultMaxSize); rejects may be nil.
func NewReader(filters []TelemetryFilter, eng *sharded.Engine, rejects Rejects, m *Metrics, log *slog.Logger, maxSize int) *Reader {
	r := &Reader{filters: filters, engine: eng, rejects: rejects, m: m, log: log, frames: newFrames()}
	r.pool.New = func() any {
		return &decoders{json: payload.Decoder{MaxSize: maxSize}, lora: lorawan.Decoder{MaxSize: maxSize}}
	}
	return r
}

// Tap has f called with every ping the engine took, after it took it, in
// the publisher's goroutine (serve's --capture): exactly the pings
// evaluated, not those refused for a full queue. Call it before the first
// Submit. The ping is passed by value, so that the publish path still
// does not allocate.
func (r *Reader) Tap(f func(engine.Ping)) { r.tap = f }

// Filters returns the telemetry filters, in the order they are matched.
func (r *Reader) Filters() []TelemetryFilter { return r.filters }

// Metrics returns the reader's counters.
func (r *Reader) Metrics() *Metrics { return r.m }

// Outcome is what Read made of a publish.
type Outcome uint8

// Outcomes of Read.
const (
	// NotTelemetry: no telemetry filter matches the topic.
	NotTelemetry Outcome = iota
	// Accepted: a valid position, to be clamped and submitted.
	Accepted
	// Ignored: an OwnTracks message that is not a location, a network
	// server's message that is not an uplink, an uplink without a position
	// or one repeating a frame already taken; routed, not evaluated.
	Ignored
	// Rejected: malformed or out of range, or a bad device id; already
	// counted, reported on the reject topic and logged.
	Rejected
	// Forbidden: the body names a device other than the topic's (see
	// ErrDeviceMismatch); counted, reported and logged as Rejected, and
	// the publisher, where it can be told, is not authorised.
	Forbidden
)

// Read matches topic against the telemetry filters, decodes and validates
// body, and counts, reports and logs what it refuses. client names the
// publisher in the log. For an Accepted publish it returns the device id,
// the position and the ingest instant, taken once, right after decoding.
func (r *Reader) Read(topic string, body []byte, client string) (id string, pos payload.Position, ingest time.Time, out Outcome) {
	return r.ReadAt(topic, body, client, time.Time{})
}

// ReadAt is Read on a clock of the caller's: at is the ingest instant
// returned and the one LoRaWAN frame counters age by (zero: the
// wall clock, as Read). A scale-out worker reads at its stream's clock,
// so that a replay forgets the frames the first run forgot.
func (r *Reader) ReadAt(topic string, body []byte, client string, at time.Time) (id string, pos payload.Position, ingest time.Time, out Outcome) {
	for i := range r.filters {
		if id, ok, err := r.filters[i].match(topic, !r.filters[i].Format.LoRaWAN()); ok {
			return r.read(&r.filters[i], id, err, topic, body, client, at)
		}
	}
	return "", pos, ingest, NotTelemetry
}

// read is ReadAt for a topic that matched tf with device id (err: the id
// level is empty or too long).
func (r *Reader) read(tf *TelemetryFilter, id string, idErr error, topic string, body []byte, client string, at time.Time) (string, payload.Position, time.Time, Outcome) {
	var pos payload.Position
	r.m.Received.Inc()
	if idErr != nil {
		r.reject(client, topic, body, id, reasonDeviceID, "")
		return id, pos, time.Time{}, Rejected
	}
	dec := r.pool.Get().(*decoders)
	defer r.pool.Put(dec)
	if tf.Format.LoRaWAN() {
		return r.readUplink(dec, tf, tf.Format, "", topic, body, client, at)
	}
	pos, err := dec.json.Decode(body, tf.Format)
	if err == payload.Uplink {
		return r.readUplink(dec, tf, payload.Auto, id, topic, body, client, at)
	}
	if err != nil {
		if errors.Is(err, payload.Ignored) {
			r.m.Ignored.Inc()
			return id, pos, time.Time{}, Ignored // an OwnTracks event or waypoint
		}
		r.reject(client, topic, body, id, reasonOf(err.(payload.Reason)), dec.json.Field())
		return id, pos, time.Time{}, Rejected
	}
	return id, pos, instant(at), Accepted
}

// instant is at, or the wall clock when at is zero.
func instant(at time.Time) time.Time {
	if at.IsZero() {
		return time.Now()
	}
	return at
}

// readUplink is read for a LoRaWAN network server's message. The topic's
// device is the device: on a device's own topic (topicID, a filter of
// format auto) the body may confirm the id but never change it; on a
// network server's topic, the body must name the device the topic's last
// '+' level names, and the filter's mapping then says which of its ids
// the device goes by. Anything else is Forbidden.
func (r *Reader) readUplink(dec *decoders, tf *TelemetryFilter, f payload.Format, topicID, topic string, body []byte, client string, at time.Time) (string, payload.Position, time.Time, Outcome) {
	u, err := dec.lora.Decode(body, f, &tf.Mapping)
	if err != nil {
		if err == payload.Ignored {
			r.m.Ignored.Inc()
			return "", u.Position, time.Time{}, Ignored // a join, a status report
		}
		r.reject(client, topic, body, topicDevice(tf, topicID, topic), reasonOf(err.(payload.Reason)), dec.lora.Field())
		return "", u.Position, time.Time{}, Rejected
	}
	id := topicID
	if topicID == "" {
		switch level := tf.deviceLevel(topic); {
		case len(u.Named) == 0:
			r.reject(client, topic, body, topicDevice(tf, topicID, topic), reasonDeviceID, "")
			return "", u.Position, time.Time{}, Rejected
		case !names(u.Named, u.NamedEscaped, level, true):
			r.reject(client, topic, body, topicDevice(tf, topicID, topic), reasonDeviceMismatch, "")
			return "", u.Position, time.Time{}, Forbidden
		}
		var ok bool
		if id, ok = uplinkDevice(topic, &u); !ok {
			r.reject(client, topic, body, topicDevice(tf, topicID, topic), reasonDeviceID, "")
			return "", u.Position, time.Time{}, Rejected
		}
	} else if len(u.Named) > 0 && !names(u.Named, u.NamedEscaped, topicID, false) {
		r.reject(client, topic, body, topicID, reasonDeviceMismatch, "")
		return "", u.Position, time.Time{}, Forbidden
	}
	if !u.HasPosition {
		r.m.NoPosition.Inc() // a heartbeat or battery report: no fault
		return id, u.Position, time.Time{}, Ignored
	}
	now := instant(at)
	if !r.frames.admit(id, sessionKey(u.Session), u.Position.Seq, now) {
		r.m.Duplicate.Inc()
		return id, u.Position, time.Time{}, Ignored
	}
	r.m.TimeSource[u.Position.Source].Inc()
	return id, u.Position, now, Accepted
}

// topicDevice is the device a refused publish is reported under on the
// reject topic: always the topic's (id when the caller has it), never one
// a body names, which would put whatever the body holds into a topic name.
func topicDevice(tf *TelemetryFilter, id, topic string) string {
	if id != "" {
		return id
	}
	id, _, err := tf.match(topic, true)
	if err != nil {
		return ""
	}
	return id
}

// names reports whether an id as an uplink spells it (escapes undecoded
// when escaped) is want; fold compares as network servers write EUIs, in
// either case.
func names(spelled []byte, escaped bool, want string, fold bool) bool {
	s := unsafe.String(unsafe.SliceData(spelled), len(spelled))
	if escaped {
		quoted := append(append(append(make([]byte, 0, len(spelled)+2), '"'), spelled...), '"')
		var dec string // on the heap, for Unmarshal: only in this rare branch
		if json.Unmarshal(quoted, &dec) != nil {
			return false
		}
		s = dec
	}
	if fold {
		return strings.EqualFold(s, want)
	}
	return s == want
}

// uplinkDevice returns the device id an uplink names, and whether it can
// be one: 1 to MaxDeviceID bytes of UTF-8, none of them a control
// character or '/', '+' or '#', as it becomes a level of the output
// topics. An id the topic spells too is taken from the topic, without
// allocating.
func uplinkDevice(topic string, u *lorawan.Uplink) (string, bool) {
	var id string
	if u.DeviceEscaped {
		quoted := make([]byte, 0, len(u.Device)+2)
		quoted = append(append(append(quoted, '"'), u.Device...), '"')
		var s string // on the heap, for Unmarshal: only in this rare branch
		if json.Unmarshal(quoted, &s) != nil {
			return "", false
		}
		id = s
	} else {
		raw := unsafe.String(unsafe.SliceData(u.Device), len(u.Device))
		if i := strings.Index(topic, raw); i >= 0 && len(raw) > 0 {
			id = topic[i : i+len(raw)]
		} else {
			id = string(u.Device)
		}
	}
	if id == "" || len(id) > MaxDeviceID || !utf8.ValidString(id) {
		return id, false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c == 0x7f || c == '/' || c == '+' || c == '#' {
			return id, false
		}
	}
	return id, true
}

// Refusal is what a publisher whose ping the engine refused (its shard's
// queue full) is to be told; the transport maps it to its own answer.
type Refusal uint8

// Refusals of Submit.
const (
	Taken   Refusal = iota // the engine has the ping
	Shed                   // QoS 0: dropped, counted
	Retry                  // a publisher that can read a reason code: retry later (MQTT 5 0x97)
	Unacked                // anything else: left unacknowledged, so it is sent again
)

// Submit hands an Accepted ping to the engine. qos and v5 say what the
// publisher can be told if the engine refuses it.
func (r *Reader) Submit(qos byte, v5 bool, pos *payload.Position, id string, ingest time.Time) Refusal {
	pg := r.engine.Ping(id, pos, ingest)
	err := r.engine.Submit(&pg)
	if err == nil && r.tap != nil {
		r.tap(pg)
	}
	return r.refusal(err, qos, v5, pos, id)
}

// Forwarder takes accepted pings to engines elsewhere instead of the
// local one: serve --cluster's JetStream ping stream, which the
// partitions' workers evaluate. Forward returns once the ping is where
// it goes (QoS 1: stored) or failed to get there, in the publisher's
// goroutine; an error refuses the ping as a full engine queue does.
type Forwarder interface {
	Forward(qos byte, topic string, body []byte, id string, pos *payload.Position) error
}

// AsyncForwarder is a Forwarder that can also take a QoS 1 ping without
// waiting: done gets the outcome later, on a goroutine it must not block,
// unless ForwardAsync returns an error instead.
type AsyncForwarder interface {
	ForwardAsync(topic string, body []byte, id string, pos *payload.Position, done func(error)) error
}

// Forwarding has the reader's Accepted pings go to f (Forward) rather
// than to the engine; set it before the first publish.
func (r *Reader) Forwarding(f Forwarder) {
	r.fwd = f
	r.afwd, _ = f.(AsyncForwarder)
}

// ForwardsAsync reports whether the reader's Forwarder takes QoS 1 pings
// without waiting (ForwardAsync).
func (r *Reader) ForwardsAsync() bool { return r.afwd != nil }

// ForwardAsync is Forward for a QoS 1 ping through an AsyncForwarder: done
// gets what the publisher is to be told, once the ping is stored or
// refused, on a goroutine it must not block. pos must stay unchanged
// until then.
func (r *Reader) ForwardAsync(v5 bool, topic string, body []byte, pos *payload.Position, id string, done func(Refusal)) {
	err := r.afwd.ForwardAsync(topic, body, id, pos, func(err error) { done(r.refusal(err, 1, v5, pos, id)) })
	if err != nil {
		done(r.refusal(err, 1, v5, pos, id))
	}
}

// Forwards reports whether the reader forwards its pings (Forwarding).
func (r *Reader) Forwards() bool { return r.fwd != nil }

// Forward is Submit for a forwarding reader: the ping goes to the
// Forwarder with its publish's topic and body, and a failure is refused
// as a full queue is, counted the same.
func (r *Reader) Forward(qos byte, v5 bool, topic string, body []byte, pos *payload.Position, id string) Refusal {
	return r.refusal(r.fwd.Forward(qos, topic, body, id, pos), qos, v5, pos, id)
}

// refusal is what a publisher is told after a ping was handed on (err
// nil) or refused; a refused frame is forgotten, so its retry is taken.
func (r *Reader) refusal(err error, qos byte, v5 bool, pos *payload.Position, id string) Refusal {
	if err != nil && pos.HasSeq {
		r.frames.forget(id, pos.Seq) // its retry is no duplicate
	}
	switch {
	case err == nil:
		return Taken
	case qos == 0:
		r.m.Shed.Inc()
		return Shed
	case qos == 1 && v5:
		r.m.Refused.Inc()
		return Retry
	default:
		r.m.Refused.Inc()
		return Unacked
	}
}

// reject counts, reports and logs a bad publish; field names the field a
// wrong_type is about ("" when the reason names no field).
func (r *Reader) reject(client, topic string, body []byte, id string, why reason, field string) {
	r.m.Rejected[why].Inc()
	msg := why.message(field)
	if r.rejects != nil {
		r.rejects.Rejected(id, topic, why.String(), msg, body)
	}
	now := time.Now().Unix()
	// One log line per reason per second: a broken tracker fleet must not
	// flood the log; the counter has the total.
	if last := r.logged[why].Load(); last != now && r.logged[why].CompareAndSwap(last, now) {
		r.log.Warn("rejected telemetry (further rejections for this reason are only counted this second)",
			"reason", why.String(), "error", msg, "device", id, "topic", topic,
			"client", client, "payload", string(body[:min(len(body), 120)]))
	}
}
