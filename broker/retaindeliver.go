package broker

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/hooks"
	"github.com/edgefence/edgefence/ingest"
)

// retainedHook sends a new subscription the retained transitions it
// matches, as mochi sends its own retained messages [MQTT-3.3.1-9]: with
// the RETAIN flag, at the lesser of the subscription's QoS and 1, with the
// subscription's identifier and the EXIT's remaining expiry, honouring
// retain handling (MQTT 5) and the ACL, none to shared subscriptions.
//
// Unlike mochi's, the delivery does not go through the subscriber's
// outbound queue (--client-queue), which overflowed for a dashboard
// subscribing to a large set: they are written straight after the SUBACK,
// and once --max-inflight (or the client's Receive Maximum) QoS 1 messages
// are unacknowledged, a goroutine goes on with the rest as acknowledgements
// make room, rather than dropping them.
type retainedHook struct {
	mqtt.HookBase
	set    *retainedSet
	srv    *mqtt.Server
	access *hooks.Access
	under  string // transition prefix + "/#": every topic a transition is on
	failed *metrics.Counter
	stop   chan struct{}
	mu     sync.Mutex // closing stop, and wg.Add once it may be closed
	wg     sync.WaitGroup

	// SUBSCRIBE packets with a retain-handling 1 filter, between
	// OnSubscribe and OnSubscribed (on the client's goroutine): whether
	// each filter was subscribed already, which mochi does not pass on.
	existed sync.Map // *mqtt.Client → []bool
	// What a SUBSCRIBE is owed, between OnSubscribed and its SUBACK.
	owed sync.Map // *mqtt.Client → *delivery
	// Deliveries waiting for a client's acknowledgements (retainwait.go).
	waits sync.Map // *mqtt.Client → *waiting
}

// retainedPoll is how often a delivery waiting for acknowledgements looks.
const retainedPoll = 2 * time.Millisecond

func newRetainedHook(set *retainedSet, srv *mqtt.Server, access *hooks.Access, prefix string, ms *metrics.Set) *retainedHook {
	return &retainedHook{
		set:    set,
		srv:    srv,
		access: access,
		under:  prefix + "/+/#",
		failed: ms.NewCounter(`edgefence_shed_total{stage="retained_delivery"}`),
		stop:   make(chan struct{}),
	}
}

// ID names the hook.
func (h *retainedHook) ID() string { return "edgefence-retained" }

// Provides says which hook events it handles.
func (h *retainedHook) Provides(b byte) bool {
	switch b {
	case mqtt.OnSubscribe, mqtt.OnSubscribed, mqtt.OnPacketSent, mqtt.OnPacketEncode, mqtt.OnDisconnect:
		return true
	}
	return false
}

// OnPacketEncode sets the RETAIN flag of a live transition going to an
// MQTT 5 subscription with retain-as-published [MQTT-3.3.1-13]: the
// publisher publishes them without it (see publisher.publish), and marks
// them by publishing from its retainedOrigin client. A message sent with a
// topic alias in place of its topic keeps the flag clear.
func (h *retainedHook) OnPacketEncode(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	if pk.FixedHeader.Type != packets.Publish || pk.FixedHeader.Retain || pk.Origin != retainedOrigin ||
		cl.Properties.ProtocolVersion != 5 || pk.TopicName == "" {
		return pk
	}
	for filter, sub := range cl.State.Subscriptions.GetAll() {
		if sub.RetainAsPublished && ingest.Matches(filter, pk.TopicName) {
			pk.FixedHeader.Retain = true
			break
		}
	}
	return pk
}

// OnSubscribe notes, for a filter with retain handling 1, whether the
// client has that subscription already (mochi adds it next).
func (h *retainedHook) OnSubscribe(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	var existed []bool
	for i, sub := range pk.Filters {
		if sub.RetainHandling != 1 {
			continue
		}
		if existed == nil {
			existed = make([]bool, len(pk.Filters))
		}
		_, existed[i] = cl.State.Subscriptions.Get(sub.Filter)
	}
	if existed != nil {
		h.existed.Store(cl, existed)
	}
	return pk
}

// OnSubscribed runs after mochi has added the subscriptions and before it
// acknowledges them: from here on a new transition reaches the client
// live, so what is retained now is what it must be sent. It is sent once
// the SUBACK is (OnPacketSent).
func (h *retainedHook) OnSubscribed(cl *mqtt.Client, pk packets.Packet, codes []byte) {
	var existed []bool
	if v, ok := h.existed.LoadAndDelete(cl); ok {
		existed = v.([]bool)
	}
	d := &delivery{cl: cl, suback: pk.PacketID}
	now := time.Now().Unix()
	for i, sub := range pk.Filters {
		if i >= len(codes) || codes[i] >= packets.ErrUnspecifiedError.Code || mqtt.IsSharedFilter(sub.Filter) ||
			sub.RetainHandling == 2 || sub.RetainHandling == 1 && existed != nil && existed[i] ||
			!ingest.Overlaps(sub.Filter, h.under) { // spares other subscriptions a look through the set
			continue
		}
		n := len(d.msgs)
		if d.msgs = h.set.match(sub.Filter, now, d.msgs); len(d.msgs) == n {
			continue
		}
		sub.Qos = min(codes[i], 1)
		d.subs = append(d.subs, sub)
		d.ends = append(d.ends, len(d.msgs))
	}
	if len(d.msgs) > 0 {
		h.owed.Store(cl, d)
	}
}

// OnPacketSent sends a SUBACK's retained transitions right after it, on
// the client's goroutine, as mochi sends its own: they come before
// anything the broker reads from the client after the SUBSCRIBE. Only
// when QoS 1 messages must wait for acknowledgements, which that goroutine
// reads, does the rest go on in a goroutine of its own (wait), and then
// the next SUBSCRIBE's go after them.
func (h *retainedHook) OnPacketSent(cl *mqtt.Client, pk packets.Packet, _ []byte) {
	if pk.FixedHeader.Type != packets.Suback {
		return
	}
	v, ok := h.owed.Load(cl)
	if !ok || v.(*delivery).suback != pk.PacketID || !h.owed.CompareAndDelete(cl, v) {
		return
	}
	d := v.(*delivery)
	if h.busy(cl) || !h.deliver(d, false) {
		h.wait(d)
	}
}

// OnDisconnect forgets what a client was owed and never sent (its SUBACK
// was not written).
func (h *retainedHook) OnDisconnect(cl *mqtt.Client, _ error, _ bool) {
	h.owed.Delete(cl)
	h.existed.Delete(cl)
	h.waits.Delete(cl) // its goroutine sees the client closed and ends
}

// delivery is the retained transitions owed to one SUBSCRIBE: msgs[:ends[0]]
// for subs[0], msgs[ends[0]:ends[1]] for subs[1], and so on; next is the
// first not yet sent.
type delivery struct {
	cl     *mqtt.Client
	suback uint16 // the SUBSCRIBE's packet id
	subs   []packets.Subscription
	msgs   []*retainedMsg
	ends   []int
	next   int
	sub    int // the index in subs of msgs[next]
	held   int // messages it had left when it began to wait
}

// deliver sends what d still owes and reports whether it is done: it stops
// early, when not allowed to wait, before a QoS 1 message the client has
// no room for; and when the client or the hook stops.
func (h *retainedHook) deliver(d *delivery, mayWait bool) bool {
	cl := d.cl
	limit := int(h.srv.Options.Capabilities.MaximumInflight)
	if rm := int(cl.Properties.Props.ReceiveMaximum); cl.Properties.ProtocolVersion == 5 && rm > 0 {
		limit = min(limit, rm)
	}
	var wait *time.Timer
	defer func() {
		if wait != nil {
			wait.Stop()
		}
	}()
	for ; d.next < len(d.msgs); d.next++ {
		for d.next >= d.ends[d.sub] {
			d.sub++
		}
		m := d.msgs[d.next]
		if cl.Closed() {
			return true
		}
		if h.set.get(m.topic) != m {
			// Replaced since the subscription: the newer one went to the
			// client live, and an older one after it would undo it.
			continue
		}
		if h.access != nil && !h.access.OnACLCheck(cl, m.topic, false) {
			continue
		}
		pk := retainedPacket(m, d.subs[d.sub])
		if pk.FixedHeader.Qos > 0 {
			for cl.State.Inflight.Len() >= limit {
				if !mayWait {
					return false
				}
				if wait == nil {
					wait = time.NewTimer(retainedPoll)
				} else {
					wait.Reset(retainedPoll)
				}
				select {
				case <-h.stop:
					return true
				case <-wait.C:
				}
				if cl.Closed() {
					return true
				}
			}
			id, err := cl.NextPacketID()
			if err != nil {
				h.failed.Inc()
				continue
			}
			pk.PacketID = uint16(id)
			if cl.State.Inflight.Set(pk) {
				atomic.AddInt64(&h.srv.Info.Inflight, 1)
				cl.State.Inflight.DecreaseSendQuota()
			}
		}
		if err := cl.WritePacket(pk); err != nil {
			if pk.FixedHeader.Qos > 0 && cl.State.Inflight.Delete(pk.PacketID) {
				atomic.AddInt64(&h.srv.Info.Inflight, -1)
				cl.State.Inflight.IncreaseSendQuota()
			}
			if errors.Is(err, packets.ErrPacketTooLarge) {
				h.failed.Inc() // larger than the client takes: mochi skips it too
				continue
			}
			return true // the connection is gone
		}
	}
	return true
}

// retainedPacket is m as published to a subscription made now.
func retainedPacket(m *retainedMsg, sub packets.Subscription) packets.Packet {
	pk := packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: sub.Qos, Retain: true},
		TopicName:   m.topic,
		Payload:     m.payload,
		Created:     m.created,
		Expiry:      m.expiry, // WritePacket sends what is left of it
		Origin:      publisherID,
		Properties: packets.Properties{
			ContentType:       "application/json",
			PayloadFormat:     1,
			PayloadFormatFlag: true,
		},
	}
	if sub.Identifier > 0 {
		pk.Properties.SubscriptionIdentifier = []int{sub.Identifier}
	}
	return pk
}

// Stop ends the deliveries in progress and waits for them; mochi calls it
// when it closes.
func (h *retainedHook) Stop() error {
	h.mu.Lock()
	if !h.stopping() {
		close(h.stop)
	}
	h.mu.Unlock()
	h.wg.Wait()
	return nil
}

// stopping reports whether Stop has begun.
func (h *retainedHook) stopping() bool {
	select {
	case <-h.stop:
		return true
	default:
		return false
	}
}
