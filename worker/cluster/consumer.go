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
// Heartbeat. It is what nats.go's ordered consumer makes (no
// acknowledgements, one replica in memory, gone a minute after its
// reader), but not that consumer, which re-creates itself inside Next
// after a reconnect or a missed heartbeat with 10 s requests, unanswered
// while the cluster elects its leaders, that neither the caller's
// bounded wait nor Stop can cut short (it holds its lock meanwhile). The
// caller does the rest of its work: on an error from Next or a skipped
// consumer sequence (a delivery lost on a reconnect, never sent again),
// it consumes anew from its last message.
func Consume(ctx context.Context, js jetstream.JetStream, stream, filter string, seq uint64, opts ...jetstream.PullMessagesOpt) (jetstream.MessagesContext, error) {
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
		return nil, err
	}
	return cons.Messages(append(opts, jetstream.PullHeartbeat(Heartbeat))...)
}
