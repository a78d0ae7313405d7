// Package wave collects what a partition's engine decides — transitions,
// late pings, rejects — in the engine's order, each with its place in the
// partition's stream, and cuts them into the waves a worker publishes
// them in: at most one output per device, so that an output sent again
// can overtake only other devices' outputs (docs/scale-out.md).
package wave

import (
	"strconv"
	"strings"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/output"
)

// Out is one message a partition's engine produced, to be published: on
// the history stream first (its ID is the de-duplication key), then over
// MQTT.
type Out struct {
	ID     string
	Device string // a wave holds one output per device
	Topic  string
	Body   []byte
	Retain bool
	Pos    Pos // where the engine decided it
}

// Pos is an output's place in a partition's stream: the ping stream
// sequence of the message that made it and its index among that
// message's outputs. A replay gives every output the same Pos.
type Pos struct {
	seq uint64
	k   int
}

// Less reports whether a comes before b in the stream.
func (a Pos) Less(b Pos) bool { return a.seq < b.seq || a.seq == b.seq && a.k < b.k }

// String is the Pos as the history records' wave header carries it.
func (a Pos) String() string { return strconv.FormatUint(a.seq, 10) + "/" + strconv.Itoa(a.k) }

// ParsePos parses Pos.String; ok is false for anything else (a record
// written before waves had the header).
func ParsePos(s string) (p Pos, ok bool) {
	seq, k, found := strings.Cut(s, "/")
	if !found {
		return Pos{}, false
	}
	var err1, err2 error
	p.seq, err1 = strconv.ParseUint(seq, 10, 64)
	p.k, err2 = strconv.Atoi(k)
	return p, err1 == nil && err2 == nil && p.k >= 0
}

// Max bounds the outputs published at once by one partition.
const Max = 256

// Len returns how many of buf's first outputs make a wave: up to the
// first device seen twice, at most Max. seen is its scratch space.
func Len(buf []Out, seen map[string]struct{}) int {
	clear(seen)
	for i := range buf {
		if _, dup := seen[buf[i].Device]; dup || i == Max {
			return i
		}
		seen[buf[i].Device] = struct{}{}
	}
	return len(buf)
}

// Sink is a partition's engine.Sink and ingest.Rejects: it only
// collects, in the order the engine decides. The partition publishes
// what a run of messages produced before it acknowledges any of them.
type Sink struct {
	// The topics of the outputs: the worker's --transition-prefix,
	// --late-topic and --reject-topic.
	TransitionPrefix, LateTopic, RejectTopic string
	// Buf is what was collected since the last Reset.
	Buf []Out
	at  Pos // the message being applied, and its outputs so far
}

// Apply starts the outputs of the message at stream sequence seq.
func (s *Sink) Apply(seq uint64) { s.at = Pos{seq: seq} }

// Reset empties Buf, keeping its room.
func (s *Sink) Reset() {
	clear(s.Buf)
	s.Buf = s.Buf[:0]
}

// Drop removes Buf's first n outputs, published, and keeps the others
// for the next try, in order.
func (s *Sink) Drop(n int) {
	k := copy(s.Buf, s.Buf[n:])
	clear(s.Buf[k:])
	s.Buf = s.Buf[:k]
}

func (s *Sink) add(o Out) {
	o.Pos = s.at
	s.at.k++
	s.Buf = append(s.Buf, o)
}

// Transition implements engine.Sink. The ID is the transition's
// content, not its position: a replay decides the same transitions, and
// JetStream de-duplicates them by it.
func (s *Sink) Transition(t *engine.Transition) {
	id := "t|" + t.Device + "|" + t.Fence + "|" + t.Type.String() + "|" + strconv.FormatInt(t.Event, 10)
	if t.Historic {
		id += "|h"
	}
	if t.Reason != "" {
		id += "|" + t.Reason
	}
	s.add(Out{
		ID:     id,
		Device: t.Device,
		Topic:  output.TransitionTopic(s.TransitionPrefix, t.Fence, t.Device),
		Body:   output.TransitionJSON(t, t.Decided),
		Retain: !t.Historic,
	})
}

// Late implements engine.Sink.
func (s *Sink) Late(l *engine.Late) {
	p := &l.Ping
	s.add(Out{
		ID:     "l|" + p.Device + "|" + strconv.FormatInt(p.Event, 10) + "|" + strconv.FormatInt(p.Ingest.UnixNano(), 10),
		Device: p.Device,
		Topic:  output.LateTopic(s.LateTopic, p.Device),
		Body:   output.LateJSON(l),
	})
}

// Rejected implements ingest.Rejects. The message's sequence keys the
// reject.
func (s *Sink) Rejected(device, topic, reason, message string, body []byte) {
	s.add(Out{
		ID:     "r|" + strconv.FormatUint(s.at.seq, 10),
		Device: device,
		Topic:  output.RejectTopic(s.RejectTopic, device),
		Body:   output.RejectJSON(device, topic, reason, message, body),
	})
}
