package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"

	"github.com/edgefence/edgefence/output"
)

// collector gathers the retained transitions upstream sends when the
// bridge subscribes to <prefix>/#, and notices the sync marker.
type collector struct {
	prefix    string // with its trailing '/'
	syncTopic string

	mu      sync.Mutex
	msgs    map[string][]byte // topic → payload, the last one received
	last    time.Time         // when the last retained message arrived
	synced  chan struct{}     // closed when the marker came back
	syncOne sync.Once
}

func newCollector(prefix string) *collector {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	return &collector{
		prefix:    prefix + "/",
		syncTopic: "edgefence-bridge/sync/" + hex.EncodeToString(nonce[:]),
		msgs:      map[string][]byte{},
		last:      time.Now(),
		synced:    make(chan struct{}),
	}
}

// receive takes p if it belongs to the restore: a retained message under
// the prefix (kept), a live one there (ignored: only the retained set is
// the state), or the marker.
func (c *collector) receive(p *paho.Publish) bool {
	switch {
	case p.Topic == c.syncTopic:
		c.syncOne.Do(func() { close(c.synced) })
		return true
	case strings.HasPrefix(p.Topic, c.prefix):
		if p.Retain {
			c.mu.Lock()
			if len(p.Payload) == 0 {
				delete(c.msgs, p.Topic)
			} else {
				c.msgs[p.Topic] = p.Payload
			}
			c.last = time.Now()
			c.mu.Unlock()
		}
		return true
	}
	return false
}

// quietSince returns when the last retained message arrived.
func (c *collector) quietSince() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// restoreState rebuilds the engine's fence state before any telemetry is
// taken: the retained transitions upstream, then on top of them the
// transitions still in the local queue (decided by a previous run, not yet
// acknowledged, so newer than anything retained). It returns the number
// of states restored.
//
// It reads the retained set over a connection of its own (client id
// <client-id>-restore, clean session): on the bridge's persistent session
// the telemetry queued while it was away arrives first, unacknowledged
// until the state is restored, and could hold the retained messages back
// behind the broker's in-flight window.
//
// Completion of the retained set is detected two ways, because MQTT does
// not say when the retained messages of a subscription end: a marker the
// bridge publishes to a topic of its own after the SUBACK comes back after
// them on brokers that keep one client's messages in order (Mosquitto,
// mochi), and a quiet period with no retained message covers the others;
// RestoreTimeout bounds the whole.
func (b *Bridge) restoreState(ctx context.Context, u *url.URL) (int, error) {
	c := newCollector(b.cfg.TransitionPrefix)
	cc, err := b.clientConfig(u)
	if err != nil {
		return 0, err
	}
	cc.ClientID = b.cfg.ClientID + "-restore"
	cc.CleanStartOnInitialConnection = true
	cc.SessionExpiryInterval = 0
	cc.EnableManualAcknowledgment = false
	cc.OnPublishReceived = []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
		return c.receive(pr.Packet), nil
	}}
	cc.OnConnectionUp, cc.OnConnectionDown = nil, nil
	cc.ConnectPacketBuilder = nil
	cc.DisconnectPacketBuilder = nil // a plain DISCONNECT, even in a simulated crash
	cmCtx, cmCancel := context.WithCancel(ctx)
	defer cmCancel()
	cm, err := autopaho.NewConnection(cmCtx, cc)
	if err != nil {
		return 0, fmt.Errorf("restore connection: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.cfg.ConnectTimeout)
		defer cancel()
		_ = cm.Disconnect(dctx)
	}()
	if err := cm.AwaitConnection(ctx); err != nil {
		return 0, err
	}

	ctx, cancel := context.WithTimeout(ctx, b.cfg.RestoreTimeout)
	defer cancel()
	filter := b.cfg.TransitionPrefix + "/#"
	sa, err := cm.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{
		{Topic: filter, QoS: 1, RetainHandling: 0},
		{Topic: c.syncTopic, QoS: 1},
	}})
	if err != nil {
		return 0, fmt.Errorf("subscribe %s: %w", filter, err)
	}
	if len(sa.Reasons) != 2 || sa.Reasons[0] >= 0x80 {
		return 0, fmt.Errorf("subscribe %s: refused (reason codes %x): the bridge needs to read the retained transitions", filter, sa.Reasons)
	}
	subscribed := time.Now()
	marker := sa.Reasons[1] < 0x80
	if marker {
		if _, err := cm.Publish(ctx, &paho.Publish{Topic: c.syncTopic, QoS: 1, Payload: []byte("restore")}); err != nil {
			b.log.Warn("restore: cannot publish the sync marker; relying on the quiet period", "topic", c.syncTopic, "error", err)
			marker = false
		}
	}
	if !marker {
		b.log.Warn("restore: no sync marker; relying on the quiet period", "quiet", b.cfg.RestoreQuiet)
	}
	timedOut := false
	if marker {
		select {
		case <-c.synced:
		case <-ctx.Done():
			timedOut = true
		}
	}
	for !timedOut {
		wait := time.Until(later(c.quietSince(), subscribed).Add(b.cfg.RestoreQuiet))
		if wait <= 0 {
			break
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			timedOut = true
		}
	}
	if timedOut {
		if err := context.Cause(ctx); !errors.Is(err, context.DeadlineExceeded) {
			return 0, err // stopping
		}
		b.log.Warn("restore: retained messages still arriving at the timeout; restoring what came", "timeout", b.cfg.RestoreTimeout)
	}

	c.mu.Lock()
	msgs := c.msgs
	c.mu.Unlock()
	n := 0
	for topic, payload := range msgs {
		r, err := output.ParseRetained(b.cfg.TransitionPrefix, topic, payload)
		if err != nil {
			b.log.Warn("restore: ignoring a retained message", "topic", topic, "error", err)
			continue
		}
		if err := b.engine.Restore(r.Device, r.Fence, r.Type, r.Event); err != nil {
			return n, err
		}
		n++
	}
	queued := b.queue.Transitions()
	for _, e := range queued {
		r, err := output.ParseRetained(b.cfg.TransitionPrefix, e.Topic, e.Body)
		if err != nil {
			// Queued under another prefix by an earlier configuration: it is
			// still published, but says nothing about this one's state.
			continue
		}
		if err := b.engine.Restore(r.Device, r.Fence, r.Type, r.Event); err != nil {
			return n, err
		}
		n++
	}
	// State may name fences removed while the bridge was down.
	if err := b.engine.Reconcile(); err != nil {
		return n, err
	}
	b.log.Info("restored fence state", "retained", len(msgs), "queued", len(queued), "marker", marker && !timedOut)
	return n, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
