package bridge

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/edgefence/edgefence/evaluator/sharded"
	"github.com/edgefence/edgefence/ingest"
)

// inMsg is one publish received from upstream, not yet acknowledged.
type inMsg struct {
	cl  *paho.Client // the connection it came on: acknowledged there
	pub *paho.Publish
}

// inbox holds received telemetry, in arrival order, for the worker. The
// receiving goroutine (paho's) never blocks on it: paho cannot reconnect
// while a handler blocks, and blocking there would also hold up the
// acknowledgements the broker needs to keep sending. Its size is bounded
// by the broker: at most ReceiveMaximum QoS 1 publishes are unacknowledged
// at once; QoS 0 ones beyond maxQoS0 are dropped.
type inbox struct {
	mu      sync.Mutex
	q       []inMsg
	head    int
	qos0    int
	wake    chan struct{}
	unacked atomic.Int64 // QoS 1 and 2 publishes received and not yet acknowledged
}

// maxQoS0 bounds the QoS 0 publishes waiting; they are not flow-controlled
// by the broker.
const maxQoS0 = 8192

func newInbox() *inbox { return &inbox{wake: make(chan struct{}, 1)} }

// push queues m, or reports false for a QoS 0 publish over the bound.
func (in *inbox) push(m inMsg) bool {
	in.mu.Lock()
	if m.pub.QoS == 0 {
		if in.qos0 >= maxQoS0 {
			in.mu.Unlock()
			return false
		}
		in.qos0++
	} else {
		in.unacked.Add(1)
	}
	in.q = append(in.q, m)
	in.mu.Unlock()
	select {
	case in.wake <- struct{}{}:
	default:
	}
	return true
}

// pop takes the oldest message, waiting until there is one or ctx is done.
func (in *inbox) pop(ctx context.Context) (inMsg, bool) {
	for {
		in.mu.Lock()
		if in.head < len(in.q) {
			m := in.q[in.head]
			in.q[in.head] = inMsg{}
			in.head++
			if in.head == len(in.q) || in.head > 1024 && in.head > len(in.q)/2 {
				in.q = append(in.q[:0], in.q[in.head:]...)
				in.head = 0
			}
			if m.pub.QoS == 0 {
				in.qos0--
			}
			in.mu.Unlock()
			return m, true
		}
		in.mu.Unlock()
		select {
		case <-in.wake:
		case <-ctx.Done():
			return inMsg{}, false
		}
	}
}

// ack acknowledges a QoS 1 or 2 publish on the connection it came on. A
// publish from a connection that has since dropped cannot be acknowledged:
// the broker sends it again on the next one (the engine then sees a
// duplicate ping, which is late or changes nothing).
func (b *Bridge) ack(cl *paho.Client, p *paho.Publish) {
	if p.QoS == 0 {
		return
	}
	_ = cl.Ack(p) // after a reconnect: packet not found, which is the case above
}

// done acknowledges a publish taken from the inbox.
func (b *Bridge) done(m inMsg) {
	if m.pub.QoS == 0 {
		return
	}
	b.inbox.unacked.Add(-1)
	b.ack(m.cl, m.pub)
}

// onPublish receives every publish from upstream, on paho's goroutine.
// Telemetry goes to the inbox for the worker; anything else (a stray
// subscription of an earlier configuration) is acknowledged and ignored.
func (b *Bridge) onPublish(pr paho.PublishReceived) (bool, error) {
	p := pr.Packet
	if b.isTelemetry(p.Topic) {
		if b.inbox.push(inMsg{pr.Client, p}) {
			return true, nil
		}
		b.hm.Shed.Inc() // QoS 0 beyond the bound, as serve sheds QoS 0 at a full queue
		return true, nil
	}
	b.ack(pr.Client, p)
	return false, nil
}

func (b *Bridge) isTelemetry(topic string) bool {
	if strings.HasPrefix(topic, "$") {
		return false // $SYS and the like: never telemetry
	}
	for i := range b.cfg.Telemetry {
		if _, ok, _ := b.cfg.Telemetry[i].Match(topic); ok {
			return true
		}
	}
	return false
}

// work is the worker goroutine: it takes telemetry in arrival order,
// decodes, clamps and submits it, and acknowledges each publish once the
// engine has taken it. While the outbound queue holds MaxQueued
// transitions or more (the circuit breaker is open) it waits instead, so
// nothing more is acknowledged and the broker keeps the telemetry.
func (b *Bridge) work(ctx context.Context) {
	defer close(b.workerDone)
	// A persistent session delivers the telemetry queued while the bridge
	// was away as soon as it connects, before the state is restored: it
	// waits in the inbox until then.
	select {
	case <-b.restoredCh:
	case <-ctx.Done():
		return
	}
	for {
		m, ok := b.inbox.pop(ctx)
		if !ok {
			return
		}
		if !b.handle(ctx, m) {
			return
		}
	}
}

// handle processes one publish; false when the bridge is stopping (the
// publish is then left unacknowledged, for the broker to send again).
func (b *Bridge) handle(ctx context.Context, m inMsg) bool {
	id, pos, at, out := b.tel.Read(m.pub.Topic, m.pub.Payload, "upstream")
	if out != ingest.Accepted {
		b.done(m) // rejected or ignored: reported, never retried
		return true
	}
	if !b.breaker(ctx) {
		return false
	}
	pg := b.engine.Ping(id, &pos, at)
	refused := false
	for {
		err := b.engine.Submit(&pg)
		if err == nil {
			break
		}
		if errors.Is(err, sharded.ErrClosed) {
			return false
		}
		if m.pub.QoS == 0 {
			b.hm.Shed.Inc()
			return true
		}
		if !refused {
			refused = true
			b.hm.Refused.Inc()
		}
		// The shard is behind: wait for it rather than answer, since a
		// subscriber has no way to say "later" to the broker.
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return false
		}
	}
	b.done(m)
	return true
}

// breaker waits while the outbound queue is full; false when ctx is done.
func (b *Bridge) breaker(ctx context.Context) bool {
	if d, _ := b.queue.Lens(); d < b.cfg.MaxQueued {
		return true
	}
	b.breakerOpen.Store(true)
	b.m.breakerTrips.Inc()
	// One line per 10 s: at the limit, the breaker may open for every ping.
	now := time.Now().Unix()
	logged := false
	if last := b.breakerLogged.Load(); now-last >= 10 && b.breakerLogged.CompareAndSwap(last, now) {
		logged = true
		d, _ := b.queue.Lens()
		b.log.Warn("outbound queue full: no longer acknowledging telemetry until it drains (the broker holds it)",
			"queued", d, "max_queued", b.cfg.MaxQueued)
	}
	ok := b.queue.WaitBelow(ctx, b.cfg.MaxQueued)
	b.breakerOpen.Store(false)
	if ok && logged {
		b.log.Info("outbound queue below the limit again: acknowledging telemetry")
	}
	return ok
}
