// Package pingstream is the ingest of serve --cluster: each ping the
// broker accepted is published to the cluster's JetStream ping stream at
// its partition's subject, where an unchanged edgefence worker consumes
// it. A QoS 1 ping returns only once JetStream acknowledged it (stored on
// the stream's replicas), so the tracker's PUBACK, which mochi sends after
// the hook returns, promises what the stream holds; ForwardAsync is the
// same promise without the wait, for a hook that writes the PUBACK itself
// when JetStream answers. A QoS 0 ping goes asynchronously, a bounded
// number in flight. Each message carries a
// Nats-Msg-Id made from the tracker's own (device, stamp, position), so a
// re-send after a reconnect, to any node, is stored once within the
// stream's duplicate window. docs/scale-out.md, "serve --cluster".
package pingstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/security"
	"github.com/edgefence/edgefence/worker/subjects"
)

// Options are what Dial connects and publishes with.
type Options struct {
	// NATS is the cluster's client URLs, comma-separated.
	NATS string
	// Security is the NATS credentials and TLS settings (the worker's).
	Security security.Settings
	// Name names the connection to the servers.
	Name string
	// Telemetry is the broker's telemetry filters: a ping's partition
	// comes from the device levels of the filter its topic matches.
	Telemetry []ingest.TelemetryFilter
	// Partitions is P, the workers' --partitions.
	Partitions int
	// Replicas and PingsMaxAge make the ping stream when no worker has.
	Replicas    int
	PingsMaxAge time.Duration
	// Timeout bounds the wait for a QoS 1 ping's acknowledgement, and a
	// QoS 0 ping's in flight; 0: DefaultTimeout.
	Timeout time.Duration
	// MaxAsync bounds the QoS 0 pings in flight; over it they are
	// dropped and counted. 0: DefaultMaxAsync.
	MaxAsync int
	// MaxDeferred bounds the QoS 1 pings ForwardAsync has in flight, all
	// connections together; over it one waits up to 200 ms for room and
	// is then refused. 0: DefaultMaxDeferred.
	MaxDeferred int
	Metrics     *metrics.Set
	Log         *slog.Logger
}

// Defaults of Options.
const (
	DefaultTimeout     = 5 * time.Second
	DefaultMaxAsync    = 4096
	DefaultMaxDeferred = 65536
)

// Errors of Forward. A ping refused with one of these is not acknowledged
// to its tracker (0x97, or no PUBACK over MQTT 3.1.1).
var (
	// ErrShed: a QoS 0 ping over the bound of those in flight.
	ErrShed = errors.New("too many QoS 0 pings in flight to the ping stream")
	// ErrClosed: the publisher is closed (the broker shutting down).
	ErrClosed = errors.New("ping stream publisher closed")
)

// Publisher publishes pings to the ping stream; it is the telemetry
// reader's ingest.Forwarder. Safe for concurrent use.
type Publisher struct {
	o      Options
	nc     *nats.Conn
	js     jetstream.JetStream
	closed atomic.Bool
	async  atomic.Int64 // QoS 0 pings in flight, for MaxAsync without the lock

	// pending is every asynchronous ping in flight, with its done (nil at
	// QoS 0). nats.go can report one ping twice (its reset on a disconnect
	// races with the publish's own error and with a no-responders retry),
	// so whoever takes a ping from here ends it, once.
	mu      sync.Mutex
	pending map[*nats.Msg]func(error)

	stored, dup, failed, shed, badSubject *metrics.Counter
	logged                                atomic.Int64 // second of the last failure's log line
}

// Dial connects to the cluster and makes the ping stream if it is
// missing (trying for a minute while the cluster elects its leaders).
func Dial(o Options) (*Publisher, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxAsync <= 0 {
		o.MaxAsync = DefaultMaxAsync
	}
	if o.MaxDeferred <= 0 {
		o.MaxDeferred = DefaultMaxDeferred
	}
	if o.Metrics == nil {
		o.Metrics = metrics.NewSet()
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	switch {
	case o.Partitions < 1 || o.Partitions > 1024:
		return nil, fmt.Errorf("--partitions %d: want 1 to 1024", o.Partitions)
	case o.Replicas < 1 || o.Replicas > 5:
		return nil, fmt.Errorf("--replicas %d: want 1 to 5", o.Replicas)
	}
	if err := o.Security.Validate(); err != nil {
		return nil, err
	}
	p := &Publisher{o: o, pending: map[*nats.Msg]func(error){}}
	m := o.Metrics
	p.stored = m.NewCounter(`edgefence_cluster_pings_total{result="stored"}`)
	p.dup = m.NewCounter(`edgefence_cluster_pings_total{result="duplicate"}`)
	p.failed = m.NewCounter(`edgefence_cluster_pings_total{result="failed"}`)
	p.shed = m.NewCounter(`edgefence_cluster_pings_total{result="shed"}`)
	p.badSubject = m.NewCounter(`edgefence_cluster_pings_total{result="bad_subject"}`)
	m.NewGauge(`edgefence_cluster_pings_in_flight`, func() float64 { return float64(p.inFlight()) })
	tc, err := o.Security.TLSConfig()
	if err != nil {
		return nil, err
	}
	// No reconnect buffer: while the connection is down a publish fails
	// at once (0x97 to the tracker) rather than waiting out the timeout
	// in the tracker's reader goroutine and reaching the stream later,
	// unacknowledged.
	opts := append(o.Security.NATSOptions(tc), cluster.LogEvents(o.Log.With("nats", "ping stream"))...)
	p.nc, err = nats.Connect(o.NATS, append(opts, nats.Name("edgefence-serve "+o.Name),
		nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond), nats.ReconnectBufSize(-1))...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS %s: %w", security.RedactURLs(o.NATS), o.Security.Explain(err))
	}
	p.js, err = jetstream.New(p.nc, jetstream.WithPublishAsyncTimeout(o.Timeout),
		jetstream.WithPublishAsyncMaxPending(o.MaxAsync+o.MaxDeferred+1),
		jetstream.WithPublishAsyncAckHandler(p.asyncAcked), jetstream.WithPublishAsyncErrHandler(p.asyncFailed))
	if err != nil {
		p.nc.Close()
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(250 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = cluster.PingStream(ctx, p.js, o.Replicas, o.PingsMaxAge)
		cancel()
		if err == nil {
			return p, nil
		}
		if time.Now().After(deadline) {
			p.nc.Close()
			return nil, fmt.Errorf("ping stream: %w", err)
		}
		o.Log.Warn("ping stream not ready, retrying", "error", err)
	}
}

// Forward publishes a ping the broker accepted (ingest.Forwarder). At
// QoS 1 and 2 it returns once JetStream stored it, or with the error
// that kept it out; at QoS 0 once it is sent, or ErrShed.
func (p *Publisher) Forward(qos byte, topic string, body []byte, id string, pos *payload.Position) error {
	m, err := p.msg(topic, body, id, pos)
	if err != nil {
		return err
	}
	if qos == 0 {
		return p.forwardAsync(m)
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.o.Timeout)
	defer cancel()
	ack, err := p.js.PublishMsg(ctx, m)
	if err != nil {
		p.failed.Inc()
		p.logFailure("ping not stored in the ping stream: refused to the tracker", topic, err)
		return err
	}
	p.count(ack)
	return nil
}

// ForwardAsync publishes a QoS 1 ping without waiting
// (ingest.AsyncForwarder): done gets nil once JetStream stored it, or the
// error that kept it out, within Timeout, on a goroutine of nats.go's that
// it must not block. An error returned instead means done is not called.
func (p *Publisher) ForwardAsync(topic string, body []byte, id string, pos *payload.Position, done func(error)) error {
	m, err := p.msg(topic, body, id, pos)
	if err != nil {
		return err
	}
	p.put(m, done)
	if _, err := p.js.PublishMsgAsync(m); err != nil {
		if _, mine := p.take(m); !mine {
			return nil // nats.go's error handler ended it and called done
		}
		p.failed.Inc()
		p.logFailure("ping not sent to the ping stream: refused to the tracker", topic, err)
		return err
	}
	return nil
}

// msg is the ping stream's message for a ping, or the error that refuses it.
func (p *Publisher) msg(topic string, body []byte, id string, pos *payload.Position) (*nats.Msg, error) {
	if p.closed.Load() {
		return nil, ErrClosed
	}
	subj, err := subjects.PingSubject(p.o.Telemetry, topic, p.o.Partitions)
	if err != nil {
		p.badSubject.Inc()
		p.logFailure("ping not published: its topic has no ping stream subject", topic, err)
		return nil, err
	}
	m := &nats.Msg{Subject: subj, Data: body, Header: nats.Header{}}
	if mid := MsgID(id, pos); mid != "" {
		m.Header.Set(jetstream.MsgIDHeader, mid)
	}
	return m, nil
}

// put adds m to the pings in flight, with its done (nil at QoS 0).
func (p *Publisher) put(m *nats.Msg, done func(error)) {
	p.mu.Lock()
	p.pending[m] = done
	p.mu.Unlock()
}

// take removes m from the pings in flight and returns its done; mine is
// false if m was not in flight any more: another path has ended it.
func (p *Publisher) take(m *nats.Msg) (done func(error), mine bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	done, mine = p.pending[m]
	if mine {
		delete(p.pending, m)
	}
	return done, mine
}

// inFlight is the number of asynchronous pings in flight.
func (p *Publisher) inFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}

// count counts a stored ping.
func (p *Publisher) count(ack *jetstream.PubAck) {
	if ack.Duplicate {
		p.dup.Inc()
	} else {
		p.stored.Inc()
	}
}

// forwardAsync sends a QoS 0 ping if fewer than MaxAsync are in flight.
func (p *Publisher) forwardAsync(m *nats.Msg) error {
	if p.async.Add(1) > int64(p.o.MaxAsync) {
		p.async.Add(-1)
		p.shed.Inc()
		return ErrShed
	}
	p.put(m, nil)
	if _, err := p.js.PublishMsgAsync(m); err != nil {
		if _, mine := p.take(m); !mine {
			return nil // nats.go's error handler ended and counted it
		}
		p.async.Add(-1)
		p.failed.Inc()
		p.logFailure("QoS 0 ping not sent to the ping stream", m.Subject, err)
		return err
	}
	return nil
}

// asyncAcked and asyncFailed end an asynchronous ping's flight, if it is
// still in flight; nats.go may call them holding its own lock, so they
// only count and call done.
func (p *Publisher) asyncAcked(_ jetstream.JetStream, m *nats.Msg, ack *jetstream.PubAck) {
	done, mine := p.take(m)
	if !mine {
		return
	}
	p.count(ack)
	if done != nil {
		done(nil)
		return
	}
	p.async.Add(-1)
}

func (p *Publisher) asyncFailed(_ jetstream.JetStream, m *nats.Msg, err error) {
	done, mine := p.take(m)
	if !mine {
		return
	}
	p.failed.Inc()
	if done != nil {
		p.logFailure("ping not stored in the ping stream: refused to the tracker", m.Subject, err)
		done(err)
		return
	}
	p.async.Add(-1)
	p.logFailure("QoS 0 ping lost on its way to the ping stream", m.Subject, err)
}

// logFailure logs at most one line a second; the counters have the rest.
func (p *Publisher) logFailure(msg, topic string, err error) {
	now := time.Now().Unix()
	if last := p.logged.Load(); last != now && p.logged.CompareAndSwap(last, now) {
		p.o.Log.Warn(msg+" (further failures this second are only counted in edgefence_cluster_pings_total)",
			"topic", topic, "error", err)
	}
}

// Close waits up to ctx for the pings in flight, then closes the
// connection; Forward fails after it. Call it once no publish comes.
func (p *Publisher) Close(ctx context.Context) {
	if !p.closed.CompareAndSwap(false, true) {
		return
	}
	select {
	case <-p.js.PublishAsyncComplete():
	case <-ctx.Done():
	}
	p.nc.Close()
	// nats.go forgets what had no answer when it closes: refused.
	p.mu.Lock()
	left := p.pending
	p.pending = map[*nats.Msg]func(error){}
	p.mu.Unlock()
	for _, done := range left {
		if done != nil {
			done(ErrClosed)
		}
	}
}
