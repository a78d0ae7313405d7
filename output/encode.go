// Package output builds what edgefence publishes: the topics and JSON
// payloads of transitions, late pings and rejected telemetry, and the
// reading of a retained transition back on restart. serve and bridge both
// use it, so their output is the same byte for byte.
package output

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/internal/jsonstr"
)

// The output payloads are built with strconv and jsonstr appends: one
// allocation per message, no reflection. Strings go through jsonstr, not
// strconv.AppendQuote, whose Go escapes (\x01) are not JSON.

const msTime = "2006-01-02T15:04:05.000Z07:00"

func appendTime(b []byte, key string, ns int64) []byte {
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":"`...)
	b = time.Unix(0, ns).UTC().AppendFormat(b, msTime)
	return append(b, '"')
}

func appendString(b []byte, key, v string) []byte {
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	return jsonstr.Append(b, v)
}

func appendFloat(b []byte, key string, v float64) []byte {
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

func appendInt(b []byte, key string, v int64) []byte {
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	return strconv.AppendInt(b, v, 10)
}

func appendBool(b []byte, key string, v bool) []byte {
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	return strconv.AppendBool(b, v)
}

// TransitionJSON is the retained payload of <prefix>/<fence>/<device>.
// decided is the server's wall clock at the decision: a restart uses it
// to restore an EXIT's expiry.
func TransitionJSON(t *engine.Transition, decided time.Time) []byte {
	b := make([]byte, 0, 320)
	b = append(b, `{"device":`...)
	b = jsonstr.Append(b, t.Device)
	b = appendString(b, "fence", t.Fence)
	b = appendString(b, "type", t.Type.String())
	stamp := t.Stamp
	if stamp == 0 {
		stamp = t.Event // no ping caused it (a removed fence's EXIT)
	}
	b = appendTime(b, "event_time", stamp)
	b = appendInt(b, "ts", stamp/1e6)
	b = appendInt(b, "server_ts", (stamp-t.Offset)/1e6)
	b = appendInt(b, "clock_offset_ms", t.Offset/1e6)
	b = appendFloat(b, "lat", t.Lat)
	b = appendFloat(b, "lon", t.Lon)
	if t.Acc > 0 {
		b = appendFloat(b, "acc", t.Acc)
	}
	b = appendBool(b, "clamped", t.Clamp.Clamped())
	if t.Clamp.Clamped() {
		b = appendString(b, "clamp_reason", t.Clamp.String())
	}
	if t.Source != payload.SourceUnset {
		b = appendString(b, "time_source", t.Source.String())
	}
	if t.Reversal {
		b = appendBool(b, "reversal", true)
	}
	if t.Timer {
		b = appendBool(b, "timer", true)
	}
	if t.Historic {
		b = appendBool(b, "historic", true)
	}
	if t.Reason != "" {
		b = appendString(b, "reason", t.Reason)
	}
	b = appendTime(b, "ingest_time", t.Ingest.UnixNano())
	b = appendTime(b, "decided_time", decided.UnixNano())
	return append(b, '}')
}

// LateJSON is the payload of <late-topic>/<device>: the ping's own fields
// plus why it was late and the watermark it fell behind.
func LateJSON(l *engine.Late) []byte {
	p := &l.Ping
	b := make([]byte, 0, 320)
	b = append(b, `{"device":`...)
	b = jsonstr.Append(b, p.Device)
	b = appendFloat(b, "lat", p.Lat)
	b = appendFloat(b, "lon", p.Lon)
	if p.HasAcc {
		b = appendFloat(b, "acc", p.Acc)
	}
	if p.HasStamp {
		b = appendInt(b, "ts", p.Stamp/1e6)
	}
	b = appendTime(b, "event_time", p.Event)
	b = appendBool(b, "clamped", p.Clamp.Clamped())
	if p.Clamp.Clamped() {
		b = appendString(b, "clamp_reason", p.Clamp.String())
	}
	if p.Source != payload.SourceUnset {
		b = appendString(b, "time_source", p.Source.String())
	}
	b = appendString(b, "reason", l.Reason.String())
	b = appendInt(b, "watermark", l.Watermark/1e6)
	b = appendTime(b, "watermark_time", l.Watermark)
	b = appendTime(b, "ingest_time", p.Ingest.UnixNano())
	return append(b, '}')
}

// MaxEcho bounds how much of a rejected payload is echoed back.
const MaxEcho = 512

// RejectJSON is the payload of <reject-topic>/<device>.
func RejectJSON(device, topic, reason, message string, body []byte) []byte {
	b := make([]byte, 0, 192+min(len(body), MaxEcho)*2)
	b = append(b, `{"device":`...)
	b = jsonstr.Append(b, device)
	b = appendString(b, "topic", topic)
	b = appendString(b, "reason", reason)
	b = appendString(b, "error", message)
	echo := body[:min(len(body), MaxEcho)]
	if utf8.Valid(echo) {
		b = appendString(b, "payload", string(echo))
	}
	b = appendInt(b, "size", int64(len(body)))
	b = appendTime(b, "ingest_time", time.Now().UnixNano())
	return append(b, '}')
}
