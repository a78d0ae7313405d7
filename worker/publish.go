package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/output"
	"github.com/edgefence/edgefence/worker/subjects"
)

// out is one message a partition's engine produced, to be published: on
// the history stream first (its id is the de-duplication key), then over
// MQTT.
type out struct {
	id     string
	device string // a wave holds one output per device
	topic  string
	body   []byte
	retain bool
	pos    pos // where the engine decided it
}

// pos is an output's place in a partition's stream: the ping stream
// sequence of the message that made it and its index among that
// message's outputs. A replay gives every output the same pos.
type pos struct {
	seq uint64
	k   int
}

func (a pos) less(b pos) bool { return a.seq < b.seq || a.seq == b.seq && a.k < b.k }

func (a pos) String() string { return strconv.FormatUint(a.seq, 10) + "/" + strconv.Itoa(a.k) }

// parsePos parses pos.String; ok is false for anything else (a record
// written before waves had the header).
func parsePos(s string) (p pos, ok bool) {
	seq, k, found := strings.Cut(s, "/")
	if !found {
		return pos{}, false
	}
	var err1, err2 error
	p.seq, err1 = strconv.ParseUint(seq, 10, 64)
	p.k, err2 = strconv.Atoi(k)
	return p, err1 == nil && err2 == nil && p.k >= 0
}

// HeaderWave is set on every history record to the pos of the first
// output of the wave it was published in: the outputs the next owner
// must treat as possibly recorded and not sent start there.
const HeaderWave = "Edgefence-Wave"

// maxWave bounds the outputs published at once by one partition.
const maxWave = 256

// sink is a partition's engine.Sink and ingest.Rejects: it only
// collects, in the order the engine decides. The partition publishes
// what a run of messages produced before it acknowledges any of them.
type sink struct {
	cfg *Config
	buf []out
	at  pos // the message being applied, and its outputs so far
}

func (s *sink) add(o out) {
	o.pos = s.at
	s.at.k++
	s.buf = append(s.buf, o)
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
	s.add(out{
		id:     id,
		device: t.Device,
		topic:  output.TransitionTopic(s.cfg.TransitionPrefix, t.Fence, t.Device),
		body:   output.TransitionJSON(t, t.Decided),
		retain: !t.Historic,
	})
}

// Late implements engine.Sink.
func (s *sink) Late(l *engine.Late) {
	p := &l.Ping
	s.add(out{
		id:     "l|" + p.Device + "|" + strconv.FormatInt(p.Event, 10) + "|" + strconv.FormatInt(p.Ingest.UnixNano(), 10),
		device: p.Device,
		topic:  output.LateTopic(s.cfg.LateTopic, p.Device),
		body:   output.LateJSON(l),
	})
}

// rejectSink reports the rejects of a partition's messages to its sink.
type rejectSink struct{ s *sink }

// Rejected implements ingest.Rejects. The message's sequence keys the
// reject.
func (r *rejectSink) Rejected(device, topic, reason, message string, body []byte) {
	s := r.s
	s.add(out{
		id:     "r|" + strconv.FormatUint(s.at.seq, 10),
		device: device,
		topic:  output.RejectTopic(s.cfg.RejectTopic, device),
		body:   output.RejectJSON(device, topic, reason, message, body),
	})
}

// errLeaseLost stops a partition whose lease ran out: another worker
// may own it now.
var errLeaseLost = errors.New("partition lease lost")

// flush publishes the outputs of the messages applied since the last
// flush, in order, in waves of at most one output per device: a wave's
// history records are published at once and their acks awaited
// together, then its MQTT messages likewise, then the next wave. One
// connection keeps a wave in order, and a record or message that fails
// and is sent again can overtake only other devices' outputs, so each
// device's order holds on both sides. What a worker killed mid-flush
// may have recorded and not sent is the last wave: every record carries
// the wave's first pos (HeaderWave) for the next owner (publishWave).
func (pt *partition) flush(ctx context.Context) error {
	buf := pt.sink.buf
	for len(buf) > 0 {
		n := pt.waveLen(buf)
		if err := pt.publishWave(ctx, buf[:n]); err != nil {
			clear(pt.sink.buf)
			pt.sink.buf = pt.sink.buf[:0]
			pt.tainted = true
			return err
		}
		pt.sent = buf[n-1].id
		buf = buf[n:]
	}
	clear(pt.sink.buf)
	pt.sink.buf = pt.sink.buf[:0]
	pt.seq = pt.applied
	return nil
}

// waveLen returns how many of buf's first outputs make a wave: up to
// the first device seen twice.
func (pt *partition) waveLen(buf []out) int {
	clear(pt.inWave)
	for i := range buf {
		if _, dup := pt.inWave[buf[i].device]; dup || i == maxWave {
			return i
		}
		pt.inWave[buf[i].device] = struct{}{}
	}
	return len(buf)
}

// publishWave records a wave's outputs in the history stream and sends
// them over MQTT, once. A record the stream already holds (a replay
// after a takeover) was sent by the owner before, unless it is suspect:
// from the previous owner's last wave on, it may have died between the
// two. A suspect retained transition is sent unless the server's
// retained store has it already; any other suspect is sent again (at
// least once: docs/scale-out.md).
func (pt *partition) publishWave(ctx context.Context, wave []out) error {
	w := pt.w
	first := wave[0].pos.String()
	msgs := make([]*nats.Msg, len(wave))
	futs := make([]jetstream.PubAckFuture, len(wave))
	for i := range wave {
		o := &wave[i]
		msg := &nats.Msg{Subject: subjects.History(pt.n), Data: o.body, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, o.id)
		msg.Header.Set(subjects.HeaderTopic, o.topic)
		msg.Header.Set(HeaderWave, first)
		if o.retain {
			msg.Header.Set(subjects.HeaderRetain, "1")
		}
		msgs[i] = msg
		if err := pt.check(ctx); err != nil {
			return err
		}
		// A failed start is published again, alone, below.
		futs[i], _ = pt.js.PublishMsgAsync(msg)
	}
	send := make([]bool, len(wave))
	for i := range wave {
		o := &wave[i]
		ack, retried, err := pt.record(ctx, msgs[i], futs[i])
		if err != nil {
			return err
		}
		send[i] = true
		if ack.Duplicate && !retried {
			switch {
			case !pt.suspect(o):
				send[i] = false
			case o.retain && pt.retainedIs(ctx, o):
				send[i] = false
			}
			if !send[i] {
				w.m.duplicates.Inc()
			}
		}
	}
	// Recorded: finish sending even if the lease is being lost, within
	// half the second validUntil keeps before it really expires, so that
	// the next owner does not count it as half-published.
	toks := make([]mqtt.Token, len(wave))
	sentAt := time.Now()
	if pt.mq.IsConnectionOpen() {
		for i := range wave {
			if send[i] {
				toks[i] = pt.mq.Publish(wave[i].topic, 1, wave[i].retain, wave[i].body)
			}
		}
	}
	for i := range wave {
		if !send[i] {
			continue
		}
		if err := pt.send(context.WithoutCancel(ctx), &wave[i], toks[i]); err != nil {
			return fmt.Errorf("send %s: %w", wave[i].topic, err)
		}
	}
	if time.Since(sentAt) >= slowWave {
		return pt.mendRetained(context.WithoutCancel(ctx), wave, send)
	}
	return nil
}

// slowWave is how long a wave's MQTT acknowledgements may take before
// its retained messages are checked in the server's retained store.
// NATS acknowledges a retained publish whose store failed (it logs
// "unable to store retained message"): the store waits for the
// retained stream, whose leader a dead node may have been, and gives
// up after its JetStream API timeout (5 s by default), holding that
// connection's acknowledgements meanwhile. A wave is fast otherwise.
const slowWave = time.Second

// mendRetained makes sure the server retains each retained message of
// a slow wave that was sent: one the retained store does not hold is
// sent again. Subscribers get that message twice, as NATS's own QoS 1
// redelivery would have them.
func (pt *partition) mendRetained(ctx context.Context, wave []out, sent []bool) error {
	for i := range wave {
		o := &wave[i]
		if !sent[i] || !o.retain {
			continue
		}
		for {
			held, err := pt.retained(ctx, o)
			if err == nil && held {
				break
			}
			if !pt.mayFinish() {
				return errLeaseLost
			}
			if err != nil {
				pt.logErr("retained store check failed, retrying", err)
				sleep(ctx, 200*time.Millisecond)
				continue
			}
			pt.w.m.retainedMends.Inc()
			pt.logErr("the server acknowledged a retained message it does not retain; sending it again",
				fmt.Errorf("topic %s", o.topic))
			if err := pt.send(ctx, o, nil); err != nil {
				return fmt.Errorf("send %s again: %w", o.topic, err)
			}
		}
	}
	return nil
}

// suspect reports whether o may have been recorded by the previous
// owner and not sent.
func (pt *partition) suspect(o *out) bool {
	return o.id == pt.suspectID || (pt.suspectFrom != nil && !o.pos.less(*pt.suspectFrom))
}

// record waits for msg's history record, published asynchronously as
// fut (nil: not started), and publishes it again, alone, until the
// stream has it. retried reports that it was: a duplicate is then
// possibly our own first try.
func (pt *partition) record(ctx context.Context, msg *nats.Msg, fut jetstream.PubAckFuture) (ack *jetstream.PubAck, retried bool, err error) {
	w := pt.w
	if fut != nil {
		select {
		case ack = <-fut.Ok():
			return ack, false, nil
		case err = <-fut.Err():
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	for {
		w.m.publishRetries.Inc()
		if err != nil {
			pt.logErr("history publish failed, retrying", err)
			sleep(ctx, 200*time.Millisecond)
		}
		if err := pt.check(ctx); err != nil {
			return nil, true, err
		}
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		ack, err = w.conn.JS.PublishMsg(c, msg)
		cancel()
		if err == nil {
			return ack, true, nil
		}
	}
}

// send publishes o over MQTT at QoS 1, retrying until the server has it
// or the lease has run out. tok is its first publish, if started.
func (pt *partition) send(ctx context.Context, o *out, tok mqtt.Token) error {
	w := pt.w
	for {
		if tok == nil && pt.mq.IsConnectionOpen() {
			tok = pt.mq.Publish(o.topic, 1, o.retain, o.body)
		}
		if tok != nil {
			// One publish, waited for as long as the lease allows: paho
			// resends it after a reconnect; a second publish of our own
			// would reach subscribers twice.
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
			tok = nil
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

// retainedIs reports whether the server retains o's payload on its topic.
func (pt *partition) retainedIs(ctx context.Context, o *out) bool {
	held, err := pt.retained(ctx, o)
	return err == nil && held
}

// retained reports whether the server retains o's payload on its topic;
// err is set when the retained store could not be read.
func (pt *partition) retained(ctx context.Context, o *out) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := pt.w.conn.JS.Stream(ctx, subjects.RetainedStream)
	if err != nil {
		return false, err
	}
	m, err := s.GetLastMsgForSubject(ctx, subjects.Retained(o.topic))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bytes.Equal(m.Data, o.body), nil
}

// lastRecord returns the id of partition n's newest history record and
// the pos its wave started at (ok false: none, or a record without it).
func (w *Worker) lastRecord(ctx context.Context, n int) (id string, wave pos, ok bool, err error) {
	m, err := w.conn.History.GetLastMsgForSubject(ctx, subjects.History(n))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", pos{}, false, nil
	}
	if err != nil {
		return "", pos{}, false, fmt.Errorf("last history record of partition %d: %w", n, err)
	}
	wave, ok = parsePos(m.Header.Get(HeaderWave))
	return m.Header.Get(jetstream.MsgIDHeader), wave, ok, nil
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
