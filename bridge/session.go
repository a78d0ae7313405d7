package bridge

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
)

// session restores the fence state, then connects the persistent session,
// starts the sender and the worker, and keeps the telemetry subscribed
// across reconnections.
func (b *Bridge) session(ctx context.Context, u *url.URL) {
	defer close(b.sessionDone)
	for delay := b.cfg.ReconnectMin; ; delay = min(2*delay, b.cfg.ReconnectMax) {
		n, err := b.restoreState(ctx, u)
		if err == nil {
			b.restored.Store(int64(n))
			break
		}
		if ctx.Err() != nil {
			return
		}
		b.log.Error("restoring fence state from upstream failed; retrying", "error", err, "retry_in", delay)
		if !sleep(ctx, delay) {
			return
		}
	}
	cc, err := b.clientConfig(u)
	if err != nil {
		b.log.Error("upstream", "error", err) // checked at Start: cannot happen
		return
	}
	cm, err := autopaho.NewConnection(ctx, cc)
	if err != nil {
		b.log.Error("upstream", "error", err)
		return
	}
	b.cmMu.Lock()
	b.cm = cm
	b.cmMu.Unlock()
	close(b.restoredCh)
	var senders sync.WaitGroup
	b.sending.Store(true)
	senders.Go(func() { b.send(ctx, cm) })
	defer senders.Wait()
	for delay := b.cfg.ReconnectMin; ; {
		b.connMu.Lock()
		changed := b.connChanged
		b.connMu.Unlock()
		if err := cm.AwaitConnection(ctx); err != nil {
			return
		}
		if err := b.subscribe(ctx, cm); err != nil {
			if ctx.Err() != nil {
				return
			}
			b.log.Error("subscribing to telemetry failed; retrying", "error", err, "retry_in", delay)
			select {
			case <-time.After(delay):
			case <-changed:
			case <-ctx.Done():
				return
			}
			delay = min(2*delay, b.cfg.ReconnectMax)
			continue
		}
		delay = b.cfg.ReconnectMin
		b.subscribed.Add(1)
		b.readyOnce.Do(func() {
			b.isReady.Store(true)
			close(b.ready)
			b.log.Info("edgefence bridge ready: fence state restored, telemetry subscribed", "restored_states", b.restored.Load())
		})
		select {
		case <-changed: // a new connection: subscribe again, in case the session was lost
		case <-ctx.Done():
			return
		}
	}
}

// subscribe subscribes to the telemetry filters at QoS 1. Retained
// telemetry is not sent (Retain Handling 2): a retained position is an
// old one, not a new ping.
func (b *Bridge) subscribe(ctx context.Context, cm *autopaho.ConnectionManager) error {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.ConnectTimeout)
	defer cancel()
	sub := &paho.Subscribe{}
	for _, tf := range b.cfg.Telemetry {
		sub.Subscriptions = append(sub.Subscriptions, paho.SubscribeOptions{Topic: tf.Filter, QoS: 1, RetainHandling: 2})
	}
	sa, err := cm.Subscribe(ctx, sub)
	if err != nil {
		return fmt.Errorf("subscribe to telemetry: %w", err)
	}
	for i, rc := range sa.Reasons {
		if rc >= 0x80 && i < len(sub.Subscriptions) {
			return fmt.Errorf("subscribe to telemetry %s: refused with reason code 0x%02x", sub.Subscriptions[i].Topic, rc)
		}
	}
	return nil
}

// onConnectionUp runs on autopaho's goroutine for each connection of the
// persistent session and must not block. When the broker has lost the
// session (a broker restarted without persistence), paho forgets the
// publishes awaiting a PUBACK without answering them: those are cancelled
// here, and go again.
func (b *Bridge) onConnectionUp(_ *autopaho.ConnectionManager, ca *paho.Connack) {
	b.connected.Store(true)
	b.m.connects.Inc()
	b.connMu.Lock()
	b.gen++
	close(b.connChanged)
	b.connChanged = make(chan struct{})
	if !ca.SessionPresent {
		for a := range b.attempts {
			if a.gen < b.gen {
				a.lost.Store(true)
				a.cancel()
			}
		}
	}
	b.connMu.Unlock()
	b.log.Info("connected upstream", "session_present", ca.SessionPresent)
}
