package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/output"
)

// out is one message a partition's engine produced, to be published: on
// the history stream first (its id is the de-duplication key), then over
// MQTT.
type out struct {
	id     string
	topic  string
	body   []byte
	retain bool
}

// sink is a partition's engine.Sink and ingest.Rejects: it only
// collects, in the order the engine decides. The partition publishes
// what one message produced before it takes the next.
type sink struct {
	cfg *Config
	buf []out
}

// Transition implements engine.Sink. The id is the transition's
// content, not its position: a replay decides the same transitions, and
// JetStream de-duplicates them by it.
func (s *sink) Transition(t *engine.Transition) {
	id := "t|" + t.Device + "|" + t.Fence + "|" + t.Type.String() + "|" + strconv.FormatInt(t.Event, 10)
	if t.Historic {
		id += "|h"
	}
	if t.Reason != "" {
		id += "|" + t.Reason
	}
	s.buf = append(s.buf, out{
		id:     id,
		topic:  output.TransitionTopic(s.cfg.TransitionPrefix, t.Fence, t.Device),
		body:   output.TransitionJSON(t, t.Decided),
		retain: !t.Historic,
	})
}

// Late implements engine.Sink.
func (s *sink) Late(l *engine.Late) {
	p := &l.Ping
	s.buf = append(s.buf, out{
		id:    "l|" + p.Device + "|" + strconv.FormatInt(p.Event, 10) + "|" + strconv.FormatInt(p.Ingest.UnixNano(), 10),
		topic: output.LateTopic(s.cfg.LateTopic, p.Device),
		body:  output.LateJSON(l),
	})
}

// rejectSink reports the rejects of one ping message; seq keys them.
type rejectSink struct {
	s   *sink
	seq uint64
}

// Rejected implements ingest.Rejects.
func (r *rejectSink) Rejected(device, topic, reason, message string, body []byte) {
	r.s.buf = append(r.s.buf, out{
		id:    "r|" + strconv.FormatUint(r.seq, 10),
		topic: output.RejectTopic(r.s.cfg.RejectTopic, device),
		body:  output.RejectJSON(device, topic, reason, message, body),
	})
}

// errLeaseLost stops a partition whose lease ran out: another worker
// may own it now.
var errLeaseLost = errors.New("partition lease lost")

// publish records o in the history stream and sends it over MQTT, once.
// A record the stream already holds (a replay after a takeover) was sent
// by the owner before, unless it is suspect, that owner's last record: it
// may have died between the two. A suspect retained transition is sent
// unless the server's retained store has it already; any other suspect
// is sent again (at least once: docs/scale-out.md).
func (pt *partition) publish(ctx context.Context, o *out) error {
	w := pt.w
	msg := &nats.Msg{Subject: historySubject(pt.n), Data: o.body, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, o.id)
	msg.Header.Set(HeaderTopic, o.topic)
	if o.retain {
		msg.Header.Set(HeaderRetain, "1")
	}
	retried := false
	var ack *jetstream.PubAck
	for {
		if err := pt.check(ctx); err != nil {
			return err
		}
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		var err error
		ack, err = w.js.PublishMsg(c, msg)
		cancel()
		if err == nil {
			break
		}
		retried = true
		w.m.publishRetries.Inc()
		pt.logErr("history publish failed, retrying", err)
		sleep(ctx, 200*time.Millisecond)
	}
	if ack.Duplicate && !retried {
		if o.id != pt.suspect {
			w.m.duplicates.Inc()
			return nil
		}
		if o.retain && pt.retainedIs(ctx, o) {
			w.m.duplicates.Inc()
			return nil
		}
	}
	// Recorded: finish sending even if the lease is being lost, within
	// half the second validUntil keeps before it really expires, so that
	// the next owner does not count it as half-published.
	if err := pt.send(context.WithoutCancel(ctx), o); err != nil {
		return fmt.Errorf("send %s: %w", o.topic, err)
	}
	return nil
}

// send publishes o over MQTT at QoS 1, retrying until the server has it
// or the lease has run out.
func (pt *partition) send(ctx context.Context, o *out) error {
	w := pt.w
	for {
		if w.mq.IsConnectionOpen() {
			// One publish, waited for as long as the lease allows: paho
			// resends it after a reconnect; a second publish of our own
			// would reach subscribers twice.
			tok := w.mq.Publish(o.topic, 1, o.retain, o.body)
			for !tok.WaitTimeout(100 * time.Millisecond) {
				if !pt.mayFinish() {
					return errLeaseLost
				}
			}
			if tok.Error() == nil {
				w.m.published.Inc()
				return nil
			}
			w.m.publishRetries.Inc()
			pt.logErr("MQTT publish failed, retrying", tok.Error())
		}
		if !pt.mayFinish() {
			return errLeaseLost
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// mayFinish reports whether a recorded output may still be sent: the
// lease has not run out, counting half the second validUntil keeps
// before it really expires.
func (pt *partition) mayFinish() bool {
	return pt.w.mono() <= pt.validUntil.Load()+int64(500*time.Millisecond)
}

func tokErr(t mqtt.Token) error {
	if err := t.Error(); err != nil {
		return err
	}
	return errors.New("no CONNACK in time")
}

// retainedIs reports whether the server retains o's payload on its topic.
func (pt *partition) retainedIs(ctx context.Context, o *out) bool {
	s, err := pt.w.js.Stream(ctx, retainedStream)
	if err != nil {
		return false
	}
	m, err := s.GetLastMsgForSubject(ctx, retainedPrefix+topicToSubject(o.topic))
	if err != nil {
		return false
	}
	return bytes.Equal(m.Data, o.body)
}

// lastRecord returns the id of partition n's newest history record.
func (w *Worker) lastRecord(ctx context.Context, n int) (string, error) {
	m, err := w.history.GetLastMsgForSubject(ctx, historySubject(n))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("last history record of partition %d: %w", n, err)
	}
	return m.Header.Get(jetstream.MsgIDHeader), nil
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
