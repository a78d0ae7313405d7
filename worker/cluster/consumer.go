package cluster

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Tries at a follower's or a partition's consumer: each bounded by
// ConsumerTimeout, as a try sent while the cluster elects a leader goes
// unanswered and the next one may reach the new leader; RetryConsumer
// apart, as a try that failed at once says nothing of the next.
const (
	ConsumerTimeout = 2 * time.Second
	RetryConsumer   = 250 * time.Millisecond
	// Heartbeat is such a consumer's idle heartbeat (JetStream's
	// shortest): one lost with its node fails Next after two missed ones.
	Heartbeat = 500 * time.Millisecond
)

// Consume makes a consumer of stream (of filter, if not empty) from the
// message after seq (from the stream's start at 0), within
// ConsumerTimeout, and returns its messages, pulled with opts and
// Heartbeat, and the NATS server it runs on (for the logs: NATS places
// it on any of the stream's replicas). It is what nats.go's ordered consumer makes (no
// acknowledgements, one replica in memory, gone a minute after its
// reader), but not that consumer, which re-creates itself inside Next
// after a reconnect or a missed heartbeat with 10 s requests, unanswered
// while the cluster elects its leaders, that neither the caller's
// bounded wait nor Stop can cut short (it holds its lock meanwhile). The
// caller does the rest of its work: on an error from Next or a skipped
// consumer sequence (a delivery lost on a reconnect, never sent again),
// it consumes anew from its last message.
func Consume(ctx context.Context, js jetstream.JetStream, stream, filter string, seq uint64, opts ...jetstream.PullMessagesOpt) (jetstream.MessagesContext, string, error) {
	cfg := jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy, AckPolicy: jetstream.AckNonePolicy,
		MemoryStorage: true, Replicas: 1, InactiveThreshold: time.Minute}
	if filter != "" {
		cfg.FilterSubjects = []string{filter}
	}
	if seq > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, seq+1
	}
	c, cancel := context.WithTimeout(ctx, ConsumerTimeout)
	defer cancel()
	cons, err := js.CreateOrUpdateConsumer(c, stream, cfg)
	if err != nil {
		return nil, "", err
	}
	var on string
	if info := cons.CachedInfo(); info != nil && info.Cluster != nil {
		on = info.Cluster.Leader
	}
	it, err := cons.Messages(append(opts, jetstream.PullHeartbeat(Heartbeat))...)
	return it, on, err
}

// ConsumeHedged is Consume tried as Hedged tries, a new try every
// HedgeEvery while none has answered, for ConsumerTimeout at most: a
// try sent while the cluster elects the meta or the stream's leader is
// never answered, and the first sent after it is. It returns the first
// consumer made; one made later is stopped, and the server deletes it
// after its InactiveThreshold.
func ConsumeHedged(ctx context.Context, js jetstream.JetStream, stream, filter string, seq uint64, opts ...jetstream.PullMessagesOpt) (jetstream.MessagesContext, string, error) {
	type made struct {
		it jetstream.MessagesContext
		on string
	}
	c, cancel := context.WithTimeout(ctx, ConsumerTimeout)
	defer cancel()
	m, err := Hedged(c, HedgeEvery, func(c context.Context) (made, error) {
		it, on, err := Consume(c, js, stream, filter, seq, opts...)
		return made{it, on}, err
	}, func(m made) { m.it.Stop() })
	return m.it, m.on, err
}
