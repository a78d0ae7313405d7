package retainfollow

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/subjects"
)

// followHistory delivers the history stream's records to the sink, the
// retained ones as retained, from the stream's end at Start on, until
// ctx is done: one stream, so each device's outputs come in the order
// they were recorded. A consumer that fails or stalls (the watchdog) is
// replaced by one starting after the last record seen.
func (f *Follower) followHistory(ctx context.Context) {
	defer f.wg.Done()
	// The bucket's current values first: a record after the history's
	// start is newer than the value the bucket had for its topic.
	select {
	case <-f.synced:
	case <-ctx.Done():
		return
	}
	s := &f.history
	for ctx.Err() == nil {
		hist := f.histStream()
		if hist == nil { // made by the first worker: wait for it
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			h, err := f.js.Stream(c, subjects.HistoryStream)
			cancel()
			if err != nil {
				pause(ctx, time.Second)
				continue
			}
			hist = h
			f.setHist(h)
		}
		cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy}
		if seq := s.seq.Load(); seq > 0 {
			cfg = jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: seq + 1}
		}
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		cons, err := hist.OrderedConsumer(c, cfg)
		cancel()
		var it jetstream.MessagesContext
		if err == nil {
			it, err = cons.Messages()
		}
		if err != nil {
			if ctx.Err() == nil {
				f.replaced(s, "consumer failed", err)
				pause(ctx, 500*time.Millisecond)
			}
			continue
		}
		reason, err := f.drainHistory(ctx, it)
		it.Stop()
		if ctx.Err() == nil {
			f.replaced(s, reason, err)
		}
	}
}

// drainHistory delivers it's records until ctx is done, it fails or the
// watchdog asks for a new consumer; it returns why it stopped.
func (f *Follower) drainHistory(ctx context.Context, it jetstream.MessagesContext) (string, error) {
	s := &f.history
	for {
		select {
		case why := <-s.replace:
			return why, nil
		default:
		}
		c, cancel := context.WithTimeout(ctx, time.Second)
		msg, err := it.Next(jetstream.NextContext(c))
		cancel()
		if ctx.Err() != nil {
			return "closing", nil
		}
		if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
			continue
		}
		if err != nil {
			return "consumer failed", err
		}
		md, err := msg.Metadata()
		if err != nil || md.Sequence.Stream <= s.seq.Load() {
			continue
		}
		if h := msg.Headers(); h.Get(subjects.HeaderTopic) != "" {
			topic := h.Get(subjects.HeaderTopic)
			if h.Get(subjects.HeaderRetain) != "" {
				f.retain(topic, msg.Data())
			} else {
				f.publish(topic, msg.Data())
			}
			f.historyDelivered(topic)
			s.updates.Inc()
		}
		s.seq.Store(md.Sequence.Stream)
	}
}
