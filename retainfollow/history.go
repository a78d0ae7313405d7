package retainfollow

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/cluster"
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
		if f.histStream() == nil { // made by the first worker: wait for it
			c, cancel := context.WithTimeout(ctx, 5*time.Second)
			h, err := f.js.Stream(c, subjects.HistoryStream)
			cancel()
			if err != nil {
				pause(ctx, time.Second)
				continue
			}
			f.setHist(h)
		}
		it, _, err := cluster.ConsumeHedged(ctx, f.js, subjects.HistoryStream, "", s.seq.Load())
		if err != nil {
			if ctx.Err() == nil {
				f.replaced(s, "consumer failed", err)
				pause(ctx, cluster.RetryConsumer)
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

// recordWait bounds a wait for a record: longer than two heartbeats, so
// that a consumer lost with its node fails within one.
const recordWait = 3 * cluster.Heartbeat

// drainHistory delivers it's records until ctx is done, it fails, skips
// a record (a delivery lost on a reconnect: its consumer has moved past
// it) or the watchdog asks for a new consumer; it returns why it stopped.
func (f *Follower) drainHistory(ctx context.Context, it jetstream.MessagesContext) (string, error) {
	s := &f.history
	var delivered uint64 // the consumer's sequence of its last message
	for {
		select {
		case why := <-s.replace:
			return why, nil
		default:
		}
		c, cancel := context.WithTimeout(ctx, recordWait)
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
		if err != nil {
			return "message without metadata", err
		}
		if md.Sequence.Consumer != delivered+1 {
			return "a record skipped", nil
		}
		delivered = md.Sequence.Consumer
		if md.Sequence.Stream <= s.seq.Load() {
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
