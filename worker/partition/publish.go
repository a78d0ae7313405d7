package partition

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/subjects"
	"github.com/edgefence/edgefence/worker/wave"
)

// ErrLeaseLost stops a partition whose lease ran out: another worker
// may own it now.
var ErrLeaseLost = errors.New("partition lease lost")

// flush publishes the outputs of the messages applied since the last
// flush, in order, in waves of at most one output per device: a wave's
// history records are published at once and their acks awaited
// together, then its MQTT messages likewise, then the next wave. One
// connection keeps a wave in order, and a record or message that fails
// and is sent again can overtake only other devices' outputs, so each
// device's order holds on both sides. What a worker killed mid-flush
// may have recorded and not sent is the last wave: every record carries
// the wave's first pos (subjects.HeaderWave) for the next owner (publishWave).
func (pt *Partition) flush(ctx context.Context) error {
	buf := pt.sink.Buf
	if len(buf) > 0 && pt.unsureHistory {
		if err := pt.learnSuspects(ctx); err != nil {
			return err // nothing published: the outputs wait in the sink
		}
	}
	for done := 0; done < len(buf); {
		n := wave.Len(buf[done:], pt.inWave)
		if err := pt.publishWave(ctx, buf[done:done+n]); err != nil {
			// The wave may be partly recorded and sent: it and those
			// after it wait in the sink for a resumed run (Resume), to
			// which they are suspect whatever the history stream shows
			// it (a record on its way may land after its read).
			from := buf[done].Pos
			pt.sink.Drop(done)
			pt.pendingFrom, pt.unsureHistory = &from, true
			return err
		}
		pt.sent = buf[done+n-1].ID
		done += n
	}
	pt.sink.Reset()
	pt.seq = pt.applied
	return nil
}

// publishWave records a wave's outputs in the history stream, then
// writes its retained ones to the retained bucket and, with NATS MQTT
// listeners, sends them over MQTT, once. A record the stream already
// holds (a replay after a takeover) was delivered by the owner before,
// unless it is suspect: from the previous owner's last wave on, it may
// have died between the two. A suspect retained transition is written
// (sent) unless the bucket (the server's retained store) has it
// already; any other suspect is sent again (at least once:
// docs/scale-out.md).
func (pt *Partition) publishWave(ctx context.Context, outs []wave.Out) error {
	m := pt.o.Metrics
	first := outs[0].Pos.String()
	msgs := make([]*nats.Msg, len(outs))
	futs := make([]jetstream.PubAckFuture, len(outs))
	for i := range outs {
		o := &outs[i]
		msg := &nats.Msg{Subject: subjects.History(pt.n), Data: o.Body, Header: nats.Header{}}
		msg.Header.Set(jetstream.MsgIDHeader, o.ID)
		msg.Header.Set(subjects.HeaderTopic, o.Topic)
		msg.Header.Set(subjects.HeaderWave, first)
		if o.Retain {
			msg.Header.Set(subjects.HeaderRetain, "1")
		}
		msgs[i] = msg
		if err := pt.check(ctx); err != nil {
			return err
		}
		// A failed start is published again, alone, below.
		futs[i], _ = pt.js.PublishMsgAsync(msg)
	}
	// deliver: the output reaches dashboards (retained bucket, MQTT). A
	// record the stream already holds was delivered by an owner before,
	// unless it is suspect; a suspect retained one is delivered where
	// it is not held yet.
	send := make([]bool, len(outs))
	put := make([]bool, len(outs))
	for i := range outs {
		o := &outs[i]
		ack, retried, err := pt.record(ctx, msgs[i], futs[i])
		if err != nil {
			return err
		}
		dup := ack.Duplicate && !retried
		deliver := !dup || pt.suspect(o)
		put[i] = deliver && o.Retain
		send[i] = deliver && pt.mq != nil
		if deliver && dup && o.Retain {
			put[i] = !pt.kvHolds(ctx, o)
			send[i] = send[i] && !pt.retainedIs(ctx, o)
		}
		if dup && !put[i] && !send[i] {
			m.Duplicates.Inc()
		}
	}
	// Recorded: finish delivering even if the lease is being lost, within
	// half the second validUntil keeps before it really expires, so that
	// the next owner does not count it as half-published.
	if err := pt.putRetained(context.WithoutCancel(ctx), outs, put); err != nil {
		return err
	}
	if pt.mq == nil {
		return nil // no NATS MQTT side: serve --cluster nodes follow the bucket
	}
	toks := make([]mqtt.Token, len(outs))
	sentAt := time.Now()
	if pt.mq.IsConnectionOpen() {
		for i := range outs {
			if send[i] {
				toks[i] = pt.mq.Publish(outs[i].Topic, 1, outs[i].Retain, outs[i].Body)
			}
		}
	}
	for i := range outs {
		if !send[i] {
			continue
		}
		if err := pt.send(context.WithoutCancel(ctx), &outs[i], toks[i]); err != nil {
			return fmt.Errorf("send %s: %w", outs[i].Topic, err)
		}
	}
	if time.Since(sentAt) >= slowWave {
		return pt.mendRetained(context.WithoutCancel(ctx), outs, send)
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
func (pt *Partition) mendRetained(ctx context.Context, outs []wave.Out, sent []bool) error {
	for i := range outs {
		o := &outs[i]
		if !sent[i] || !o.Retain {
			continue
		}
		for {
			held, err := pt.retained(ctx, o)
			if err == nil && held {
				break
			}
			if !pt.mayFinish() {
				return ErrLeaseLost
			}
			if err != nil {
				pt.logErr("retained store check failed, retrying", err)
				sleep(ctx, 200*time.Millisecond)
				continue
			}
			pt.o.Metrics.RetainedMends.Inc()
			pt.logErr("the server acknowledged a retained message it does not retain; sending it again",
				fmt.Errorf("topic %s", o.Topic))
			if err := pt.send(ctx, o, nil); err != nil {
				return fmt.Errorf("send %s again: %w", o.Topic, err)
			}
		}
	}
	return nil
}

// suspect reports whether o may have been recorded by the previous
// owner and not sent.
func (pt *Partition) suspect(o *wave.Out) bool {
	return o.ID == pt.suspectID || (pt.suspectFrom != nil && !o.Pos.Less(*pt.suspectFrom))
}

// record waits for msg's history record, published asynchronously as
// fut (nil: not started), and publishes it again, alone, until the
// stream has it. retried reports that it was: a duplicate is then
// possibly our own first try.
func (pt *Partition) record(ctx context.Context, msg *nats.Msg, fut jetstream.PubAckFuture) (ack *jetstream.PubAck, retried bool, err error) {
	o := pt.o
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
		o.Metrics.PublishRetries.Inc()
		if err != nil {
			pt.logErr("history publish failed, retrying", err)
			sleep(ctx, 200*time.Millisecond)
		}
		if err := pt.check(ctx); err != nil {
			return nil, true, err
		}
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		ack, err = pt.publishHedged(c, msg)
		cancel()
		if err == nil {
			return ack, true, nil
		}
	}
}

// publishHedged publishes msg, sending it again every 250 ms while no
// copy has been acknowledged (cluster.Hedged): a publish sent while the
// history stream elects its leader is never answered. The copies carry
// one message id, so the stream stores one; the first acknowledgement
// is returned.
func (pt *Partition) publishHedged(ctx context.Context, msg *nats.Msg) (*jetstream.PubAck, error) {
	return cluster.Hedged(ctx, cluster.HedgeEvery, func(c context.Context) (*jetstream.PubAck, error) {
		return pt.o.Conn.JS.PublishMsg(c, msg)
	}, nil)
}

// send publishes o over MQTT at QoS 1, retrying until the server has it
// or the lease has run out. tok is its first publish, if started.
func (pt *Partition) send(ctx context.Context, o *wave.Out, tok mqtt.Token) error {
	m := pt.o.Metrics
	for {
		if tok == nil && pt.mq.IsConnectionOpen() {
			tok = pt.mq.Publish(o.Topic, 1, o.Retain, o.Body)
		}
		if tok != nil {
			// One publish, waited for as long as the lease allows: paho
			// resends it after a reconnect; a second publish of our own
			// would reach subscribers twice.
			for !tok.WaitTimeout(100 * time.Millisecond) {
				if !pt.mayFinish() {
					return ErrLeaseLost
				}
			}
			if tok.Error() == nil {
				m.Published.Inc()
				return nil
			}
			m.PublishRetries.Inc()
			pt.logErr("MQTT publish failed, retrying", tok.Error())
			tok = nil
		}
		if !pt.mayFinish() {
			return ErrLeaseLost
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

// mayFinish reports whether a recorded output may still be sent: the
// lease has not run out, counting half the second validUntil keeps
// before it really expires.
func (pt *Partition) mayFinish() bool {
	return pt.o.Mono() <= pt.ValidUntil.Load()+int64(500*time.Millisecond)
}

// retainedIs reports whether the server retains o's payload on its topic.
func (pt *Partition) retainedIs(ctx context.Context, o *wave.Out) bool {
	held, err := pt.retained(ctx, o)
	return err == nil && held
}

// retained reports whether the server retains o's payload on its topic;
// err is set when the retained store could not be read.
func (pt *Partition) retained(ctx context.Context, o *wave.Out) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := pt.o.Conn.JS.Stream(ctx, subjects.RetainedStream)
	if err != nil {
		return false, err
	}
	m, err := s.GetLastMsgForSubject(ctx, subjects.Retained(o.Topic))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bytes.Equal(m.Data, o.Body), nil
}

// setSuspects marks what the partition's previous owner may have recorded
// and not sent, from the partition's last history record (last, the pos
// its wave started at if ok): nothing when clean, else the records from
// that wave on, or the record alone without a wave.
func (pt *Partition) setSuspects(clean bool, last string, first wave.Pos, ok bool) {
	pt.suspectID, pt.suspectFrom = "", nil
	switch {
	case clean:
	case ok:
		pt.suspectFrom = &first
	default:
		pt.suspectID = last
	}
}

// learnSuspects reads, before a resumed run's first publish, the last
// history record: one after the last output the partition sent was
// recorded by another owner while the lease lapsed, which may have died
// between recording its last wave and sending it. The outputs the lapsed
// run left pending are suspect too.
func (pt *Partition) learnSuspects(ctx context.Context) error {
	c, cancel := context.WithTimeout(ctx, 3*pt.o.Config.Lease)
	last, first, ok, err := pt.lastRecord(c)
	cancel()
	if err != nil {
		return err
	}
	pt.setSuspects(last == pt.sent, last, first, ok)
	if p := pt.pendingFrom; p != nil && (pt.suspectFrom == nil || p.Less(*pt.suspectFrom)) {
		pt.suspectFrom = p
	}
	pt.pendingFrom, pt.unsureHistory = nil, false
	return nil
}

// lastRecord returns the id of the partition's newest history record
// and the pos its wave started at (ok false: none, or a record without
// it).
func (pt *Partition) lastRecord(ctx context.Context) (id string, first wave.Pos, ok bool, err error) {
	n := pt.n
	m, err := cluster.LastMsg(ctx, pt.o.Conn.History, subjects.History(n))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", wave.Pos{}, false, nil
	}
	if err != nil {
		return "", wave.Pos{}, false, fmt.Errorf("last history record of partition %d: %w", n, err)
	}
	first, ok = wave.ParsePos(m.Header.Get(subjects.HeaderWave))
	return m.Header.Get(jetstream.MsgIDHeader), first, ok, nil
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
