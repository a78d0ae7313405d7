package bridge

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
	"github.com/edgefence/edgefence/bridge/queue"
)

// attempt is one publish awaiting its PUBACK.
type attempt struct {
	gen    uint64 // the connection it was made on
	cancel context.CancelFunc
	lost   atomic.Bool // cancelled because the broker lost the session
}

// Reason codes of a PUBACK that no retry can change: the entry is set
// aside rather than block its device forever.
var permanent = map[byte]string{
	0x87: "not authorized",
	0x90: "topic name invalid",
	0x99: "payload format invalid",
}

// send hands queued entries to publisher goroutines, at most MaxInflight
// at once and one per device, until ctx is done.
func (b *Bridge) send(ctx context.Context, cm *autopaho.ConnectionManager) {
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, b.cfg.MaxInflight)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		e := b.queue.Next(ctx)
		if e == nil {
			return
		}
		wg.Go(func() {
			defer func() { <-slots }()
			b.publish(ctx, cm, e)
		})
	}
}

// publish publishes one entry at QoS 1 until the broker acknowledges it,
// then removes it from the queue. Nothing else removes it: a bridge that
// stops or crashes before the PUBACK publishes it again on its next
// start, which may duplicate it upstream (QoS 1 is at least once).
func (b *Bridge) publish(ctx context.Context, cm *autopaho.ConnectionManager, e *queue.Entry) {
	var lastLog time.Time
	for failures := 0; ; failures++ {
		if err := cm.AwaitConnection(ctx); err != nil {
			b.queue.Release(e)
			return
		}
		pctx, cancel := context.WithCancel(ctx)
		a := &attempt{cancel: cancel}
		b.connMu.Lock()
		a.gen = b.gen
		b.attempts[a] = struct{}{}
		b.connMu.Unlock()
		resp, err := cm.Publish(pctx, b.packet(e))
		b.connMu.Lock()
		delete(b.attempts, a)
		b.connMu.Unlock()
		cancel()
		switch {
		case err == nil:
			if !e.Ingest.IsZero() {
				b.m.publishLatency.Observe(time.Since(e.Ingest))
			}
			if err := b.queue.Ack(e); err != nil {
				b.log.Error("queue: cannot remove a published entry; it will be published again on restart", "error", err)
			}
			return
		case ctx.Err() != nil:
			b.queue.Release(e) // stopping: it stays queued for the next start
			return
		case a.lost.Load():
			continue // the session was lost with it: publish again, now
		}
		b.m.publishErrors.Inc()
		if resp != nil && resp.ReasonCode >= 0x80 {
			if why, ok := permanent[resp.ReasonCode]; ok {
				b.log.Error("upstream refused a publish for good; set aside in the queue directory",
					"topic", e.Topic, "reason_code", resp.ReasonCode, "reason", why, "file", e.File())
				if err := b.queue.SetAside(e); err != nil {
					b.log.Error("queue", "error", err)
				}
				b.m.setAside.Inc()
				return
			}
		}
		delay := min(50*time.Millisecond<<min(failures, 10), 30*time.Second)
		if resp != nil {
			delay = max(delay, time.Second) // the broker is answering: quota, rate limit, overload
		}
		if time.Since(lastLog) > 10*time.Second {
			lastLog = time.Now()
			rc := -1
			if resp != nil {
				rc = int(resp.ReasonCode)
			}
			if !errors.Is(err, context.Canceled) {
				b.log.Warn("publish upstream failed; retrying", "topic", e.Topic, "reason_code", rc, "error", err, "retry_in", delay)
			}
		}
		if !sleep(ctx, delay) {
			b.queue.Release(e)
			return
		}
	}
}

// packet builds the MQTT publish of an entry. A retained EXIT carries the
// expiry left of its ExitExpiry, counted from the decision (at least a
// second, so that even one published late is seen by live subscribers).
func (b *Bridge) packet(e *queue.Entry) *paho.Publish {
	format := byte(1) // UTF-8
	p := &paho.Publish{
		QoS:     1,
		Retain:  e.Retain,
		Topic:   e.Topic,
		Payload: e.Body,
		Properties: &paho.PublishProperties{
			ContentType:   "application/json",
			PayloadFormat: &format,
		},
	}
	if e.ExpireAt != 0 {
		left := time.Until(time.Unix(0, e.ExpireAt))
		secs := uint32(max(1, (left+time.Second-1)/time.Second))
		p.Properties.MessageExpiry = &secs
	}
	return p
}
