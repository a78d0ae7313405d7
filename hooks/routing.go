package hooks

import (
	"sync"
	"sync/atomic"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/ingest"
)

// routing knows whether any subscription could receive telemetry. Routing a
// publish costs mochi a subscriber lookup that allocates several maps even
// when nobody subscribes (half of the broker's allocations per ping), and
// trackers' pings rarely have a subscriber: then the hook acknowledges them
// without routing them, which a publisher cannot tell apart.
type routing struct {
	mu      sync.Mutex // serialises recounts, so the last one sees the last change
	srv     *mqtt.Server
	filters []string    // telemetry filters, unshared
	known   atomic.Bool // counted at least once; until then everything is routed
	wanted  atomic.Bool // a subscription overlaps a telemetry filter
}

// Watch starts tracking srv's subscriptions: call it after srv.Serve has
// restored stored sessions and before clients connect. Until it is called
// every telemetry publish is routed as usual.
func (h *Telemetry) Watch(srv *mqtt.Server) {
	h.routes.mu.Lock()
	h.routes.srv = srv
	h.routes.mu.Unlock()
	h.routes.recount()
}

// routed reports whether telemetry publishes must go through mochi's
// routing: yes unless subscriptions are being tracked and none overlaps a
// telemetry filter.
func (r *routing) routed() bool { return !r.known.Load() || r.wanted.Load() }

// recount looks at every client's subscriptions (offline persistent
// sessions included). Subscriptions of server-side inline subscribers
// (mqtt.Server.Subscribe) are not visible here; edgefence has none.
func (r *routing) recount() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv == nil {
		return
	}
	wanted := false
	for _, cl := range r.srv.Clients.GetAll() {
		for filter := range cl.State.Subscriptions.GetAll() {
			if r.overlapsTelemetry(filter) {
				wanted = true
				break
			}
		}
		if wanted {
			break
		}
	}
	r.wanted.Store(wanted)
	r.known.Store(true)
}

// subscribed notes the filters of a SUBACK: one granted that could reach
// telemetry makes the answer yes at once. No recount: a connect storm of
// trackers each subscribing to devices/<id>/# would make it quadratic.
func (r *routing) subscribed(filters packets.Subscriptions, codes []byte) {
	for i, f := range filters {
		if i < len(codes) && codes[i] >= 0x80 {
			continue // refused
		}
		if r.overlapsTelemetry(f.Filter) {
			r.mu.Lock() // after any recount that started before this subscription
			r.wanted.Store(true)
			r.mu.Unlock()
			return
		}
	}
}

// changed is called with the filters of an unsubscribe; only those that
// could reach telemetry can change the answer, to no: recount.
func (r *routing) changed(filters packets.Subscriptions) {
	for _, f := range filters {
		if r.overlapsTelemetry(f.Filter) {
			r.recount()
			return
		}
	}
}

func (r *routing) overlapsTelemetry(filter string) bool {
	filter = ingest.Unshare(filter)
	for _, tf := range r.filters {
		if ingest.Overlaps(tf, filter) {
			return true
		}
	}
	return false
}

// OnSubscribed notes a subscription that may receive telemetry.
func (h *Telemetry) OnSubscribed(cl *mqtt.Client, pk packets.Packet, reasonCodes []byte) {
	h.routes.subscribed(pk.Filters, reasonCodes)
}

// OnUnsubscribed notes an unsubscribe, or a session's subscriptions
// removed when it ends.
func (h *Telemetry) OnUnsubscribed(cl *mqtt.Client, pk packets.Packet) {
	h.routes.changed(pk.Filters)
}
