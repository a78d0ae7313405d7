package partition

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/subjects"
)

// consumerTimeout bounds one try at creating a partition's consumer: a
// try sent while the stream elected its leader goes unanswered, and the
// next one, a second later, reaches the new leader.
const consumerTimeout = 2 * time.Second

// retryConsumer is the pause between tries at a consumer: short, as a
// try that failed at once (no stream leader yet) says nothing of the
// next.
const retryConsumer = 250 * time.Millisecond

// heartbeat is a consumer's idle heartbeat (JetStream's shortest): a
// consumer lost with its node fails Next after two missed ones, within a
// partition's wait for a message (a quarter lease) at the default lease.
const heartbeat = 500 * time.Millisecond

// consume returns a new consumer of the partition's messages from the
// one after the last applied. It is a plain one, acknowledging nothing,
// in memory on one replica, as nats.go's ordered consumer makes; not the
// ordered consumer itself, which re-creates itself inside Next after a
// reconnect or a missed heartbeat with a 10 s request that neither the
// partition's bounded wait nor Stop can cut short (it holds its lock
// meanwhile), unanswered while the cluster elects its leaders. The run
// loop does the ordered consumer's other part: a skipped consumer
// sequence (a delivery lost on a reconnect) replaces the consumer.
func (pt *Partition) consume(ctx context.Context) (jetstream.MessagesContext, error) {
	cc := jetstream.ConsumerConfig{FilterSubjects: []string{subjects.PingFilter(pt.n)}, AckPolicy: jetstream.AckNonePolicy,
		MemoryStorage: true, Replicas: 1, InactiveThreshold: time.Minute}
	if pt.applied > 0 {
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, pt.applied+1
	}
	cons, err := pt.o.Conn.JS.CreateOrUpdateConsumer(ctx, subjects.PingStream, cc)
	if err != nil {
		return nil, err
	}
	return cons.Messages(jetstream.PullMaxMessages(512), jetstream.PullHeartbeat(heartbeat))
}

// firstConsumer returns the partition's first consumer, trying again
// while the tries go unanswered (a partition taken while the
// cluster elects the stream's leader) and the lease holds.
func (pt *Partition) firstConsumer(ctx context.Context) (jetstream.MessagesContext, error) {
	for {
		c, cancel := context.WithTimeout(ctx, consumerTimeout)
		it, err := pt.consume(c)
		cancel()
		if err == nil || !cluster.Unanswered(err) {
			pt.replacedAt = time.Now()
			return it, err
		}
		pt.logErr("partition consumer not created yet", err)
		if err := pt.check(ctx); err != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(retryConsumer):
		}
	}
}

// reconsume stops old and returns a new consumer from the message after
// the last applied, trying until one is created or ctx is
// done; it returns old, stopped, when ctx ends first. The engine's state
// stays: nothing is replayed. Replacements are a second apart at least,
// so that a consumer failing at once is not replaced in a loop.
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
		c, cancel := context.WithTimeout(ctx, consumerTimeout)
		it, err := pt.consume(c)
		cancel()
		pt.Progress.Refused.Store(err != nil && !cluster.Unanswered(err))
		if err == nil {
			pt.replacedAt = time.Now()
			pt.o.Log.Info("partition consumer replaced", "partition", pt.n, "from_seq", pt.applied+1)
			return it, nil
		}
		pt.logErr("partition consumer not created", err)
		if err := pt.check(ctx); err != nil {
			return old, err
		}
		select {
		case <-ctx.Done():
			return old, ctx.Err()
		case <-time.After(retryConsumer):
		}
	}
}
