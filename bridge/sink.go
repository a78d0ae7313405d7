package bridge

import (
	"time"

	"github.com/edgefence/edgefence/bridge/queue"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/output"
)

// sink is the engine's Sink and the telemetry reader's Rejects: it turns
// output into queue entries and hands them to the writer goroutine, so
// that no shard waits on the disk. A transition waits for room (it is
// never dropped; the back-pressure reaches the inbound side as a full
// engine queue); a late ping or reject is dropped and counted when the
// writer is behind, as serve does.
type sink struct {
	b  *Bridge
	in chan *queue.Entry
}

// Transition implements engine.Sink.
func (s *sink) Transition(t *engine.Transition) {
	cfg := &s.b.cfg
	e := &queue.Entry{
		Key:        t.Device,
		Topic:      output.TransitionTopic(cfg.TransitionPrefix, t.Fence, t.Device),
		Body:       output.TransitionJSON(t, t.Decided),
		Retain:     true,
		Transition: true,
	}
	if !t.Timer {
		e.Ingest = t.Ingest
	}
	if t.Historic {
		// The past, revealed by late pings: published, never retained,
		// and not the state a restore reads back.
		e.Retain, e.Transition = false, false
	}
	if t.Type == engine.Exit {
		// The retained set stays bounded: an EXIT only says "outside",
		// which is also what no message says.
		e.ExpireAt = t.Decided.Add(cfg.ExitExpiry).UnixNano()
	}
	select {
	case s.in <- e:
	case <-s.b.dead:
		// Killed (a crash, in tests): what was not written is lost, as
		// with a real crash.
	}
}

// Late implements engine.Sink.
func (s *sink) Late(l *engine.Late) {
	s.side(&queue.Entry{Key: l.Ping.Device, Topic: output.LateTopic(s.b.cfg.LateTopic, l.Ping.Device), Body: output.LateJSON(l)})
}

// Rejected implements ingest.Rejects.
func (s *sink) Rejected(device, topic, reason, message string, body []byte) {
	s.side(&queue.Entry{
		Key:   device,
		Topic: output.RejectTopic(s.b.cfg.RejectTopic, device),
		Body:  output.RejectJSON(device, topic, reason, message, body),
	})
}

func (s *sink) side(e *queue.Entry) {
	select {
	case s.in <- e:
	default:
		s.b.m.sideShed.Inc()
	}
}

// maxSide bounds the late and reject reports held in memory while
// upstream is away; beyond it they are dropped and counted.
const maxSide = 4096

// writeLoop is the writer goroutine: it writes transitions to the queue
// directory in batches and makes every entry available to the sender in
// the order the engine produced it. It returns when stop is closed and
// what was sent before is written.
func (b *Bridge) writeLoop(in <-chan *queue.Entry, stop <-chan struct{}) {
	defer close(b.writerDone)
	batch := make([]*queue.Entry, 0, 256)
	for {
		select {
		case e := <-in:
			batch = append(batch[:0], e)
		drain:
			for len(batch) < cap(batch) {
				select {
				case e := <-in:
					batch = append(batch, e)
				default:
					break drain
				}
			}
			b.store(batch)
		case <-stop:
			for {
				select {
				case e := <-in:
					b.store([]*queue.Entry{e})
					continue
				default:
				}
				return
			}
		case <-b.dead:
			return
		}
	}
}

// store writes the durable entries of batch, retrying while the disk
// refuses (a decided transition is not dropped), and queues them all.
func (b *Bridge) store(batch []*queue.Entry) {
	var durable []*queue.Entry
	for _, e := range batch {
		if e.Transition {
			durable = append(durable, e)
		}
	}
	for delay := 100 * time.Millisecond; len(durable) > 0; delay = min(2*delay, 5*time.Second) {
		err := b.queue.Write(durable)
		if err == nil {
			break
		}
		b.m.queueErrors.Inc()
		b.log.Error("cannot write the outbound queue; retrying (the engine stalls meanwhile)", "error", err, "retry_in", delay)
		select {
		case <-time.After(delay):
		case <-b.dead:
			return
		}
	}
	keep := batch[:0]
	_, volatile := b.queue.Lens()
	for _, e := range batch {
		if !e.Transition {
			if volatile >= maxSide {
				b.m.sideShed.Inc()
				continue
			}
			volatile++
		}
		keep = append(keep, e)
	}
	b.queue.Add(keep)
}
