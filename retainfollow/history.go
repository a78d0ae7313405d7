package retainfollow

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/subjects"
)

// followHistory delivers the history stream's records that are not
// retained (late pings, rejects, transitions of the past) to the sink,
// from the stream's end at Start on, until ctx is done. The retained
// ones are the bucket's to deliver: a dashboard gets each once. A
// consumer that fails or stalls (the watchdog) is replaced by one
// starting after the last record seen.
func (f *Follower) followHistory(ctx context.Context) {
	defer f.wg.Done()
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
		if h := msg.Headers(); h.Get(subjects.HeaderRetain) == "" {
			if topic := h.Get(subjects.HeaderTopic); topic != "" {
				f.sink.Publish(topic, msg.Data())
				s.updates.Inc()
			}
		}
		s.seq.Store(md.Sequence.Stream)
	}
}
