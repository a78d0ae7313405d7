package partition

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/subjects"
)

// consume returns a new consumer of the partition's messages from the
// one after the last applied (cluster.ConsumeHedged); the run loop replaces it
// when Next fails or it skips a message.
func (pt *Partition) consume(ctx context.Context) (jetstream.MessagesContext, string, error) {
	return cluster.ConsumeHedged(ctx, pt.o.Conn.JS, subjects.PingStream, subjects.PingFilter(pt.n), pt.applied, jetstream.PullMaxMessages(512))
}

// firstConsumer returns the partition's first consumer, trying again
// while the tries go unanswered (a partition taken while the
// cluster elects the stream's leader) and the lease holds.
func (pt *Partition) firstConsumer(ctx context.Context) (jetstream.MessagesContext, error) {
	for {
		it, on, err := pt.consume(ctx) // bounded by cluster.ConsumerTimeout
		if err == nil || !cluster.Unanswered(err) {
			pt.replacedAt = time.Now()
			if err == nil {
				pt.o.Log.Info("partition consuming", "partition", pt.n, "from_seq", pt.applied+1, "on", on)
			}
			return it, err
		}
		pt.logErr("partition consumer not created yet", err)
		if err := pt.check(ctx); err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(cluster.RetryConsumer):
		}
	}
}

// reconsume stops old and returns a new consumer from the message after
// the last applied, trying until one is created or ctx is
// done; it returns old, stopped, when ctx ends first. The engine's state
// stays: nothing is replayed. Replacements are a second apart at least,
// so that a consumer failing at once is not replaced in a loop, and a
// replacement asked for while one is being made is answered by it.
func (pt *Partition) reconsume(ctx context.Context, old jetstream.MessagesContext) (jetstream.MessagesContext, error) {
	pt.Progress.Replacing.Store(true)
	defer pt.Progress.Replacing.Store(false)
	old.Stop()
	select {
	case <-ctx.Done():
		return old, ctx.Err()
	case <-time.After(time.Until(pt.replacedAt.Add(time.Second))):
	}
	for {
		it, on, err := pt.consume(ctx) // bounded by cluster.ConsumerTimeout
		pt.Progress.Refused.Store(err != nil && !cluster.Unanswered(err))
		if err == nil {
			pt.replacedAt = time.Now()
			pt.ReplaceAsked() // one asked for while this one was being made is this one
			pt.o.Log.Info("partition consumer replaced", "partition", pt.n, "from_seq", pt.applied+1, "on", on)
			return it, nil
		}
		pt.logErr("partition consumer not created", err)
		if err := pt.check(ctx); err != nil {
			return old, err
		}
		select {
		case <-ctx.Done():
			return old, ctx.Err()
		case <-time.After(cluster.RetryConsumer):
		}
	}
}
