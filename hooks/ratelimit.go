package hooks

import (
	"log/slog"
	"sync"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
	"golang.org/x/time/rate"
)

// RateLimit caps each client's publish rate, so one misbehaving tracker
// cannot take the broker's time from the others. A publish over the limit
// is refused (MQTT 5 QoS 1: 0x96, message rate too high; 3.1.1 QoS 1: no
// acknowledgement, so it is resent later; QoS 0: dropped); a client that
// keeps publishing into the limit is disconnected.
type RateLimit struct {
	mqtt.HookBase
	limit   rate.Limit
	burst   int
	cutoff  int // refused publishes in a row before the client is cut off
	clients sync.Map
	limited *metrics.Counter
	cut     *metrics.Counter
	log     *slog.Logger
}

type clientRate struct {
	lim     *rate.Limiter
	mu      sync.Mutex // the refusal streak; a client's publishes are sequential but its takeover is not
	refused int
}

// NewRateLimit allows perSecond publishes per client with bursts of burst.
func NewRateLimit(perSecond float64, burst int, set *metrics.Set, log *slog.Logger) *RateLimit {
	return &RateLimit{
		limit:   rate.Limit(perSecond),
		burst:   burst,
		cutoff:  max(2*burst, 20),
		limited: set.NewCounter(`edgefence_rate_limited_total`),
		cut:     set.NewCounter(`edgefence_clients_cut_off_total{reason="rate"}`),
		log:     log,
	}
}

// ID names the hook.
func (h *RateLimit) ID() string { return "edgefence-rate-limit" }

// Provides says which hook events the hook handles.
func (h *RateLimit) Provides(b byte) bool { return b == mqtt.OnPublish || b == mqtt.OnDisconnect }

// OnPublish admits or refuses one publish; it runs before the telemetry
// hook, so a refused ping is never decoded.
func (h *RateLimit) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	if cl.Net.Inline {
		return pk, nil // the transition publisher: the server's own output is never limited
	}
	c := h.client(cl)
	if c.admit() {
		return pk, nil
	}
	if h.refused(c, cl.ID, cl.Net.Remote) {
		cl.Stop(packets.ErrMessageRateTooHigh)
	}
	switch {
	case pk.FixedHeader.Qos == 1 && cl.Properties.ProtocolVersion == 5:
		return pk, packets.ErrMessageRateTooHigh
	case pk.FixedHeader.Qos > 0:
		return pk, packets.ErrRejectPacket
	}
	return pk, packets.CodeSuccessIgnore
}

// OnDisconnect forgets the client's limiter.
func (h *RateLimit) OnDisconnect(cl *mqtt.Client, err error, expire bool) { h.clients.Delete(cl) }

func (h *RateLimit) refused(c *clientRate, id, remote string) (cut bool) {
	h.limited.Inc()
	c.mu.Lock()
	c.refused++
	cut = c.refused == h.cutoff
	c.mu.Unlock()
	if cut {
		h.cut.Inc()
		h.log.Warn("disconnecting client: kept publishing over its rate limit", "client", id, "remote", remote,
			"limit_per_s", float64(h.limit), "burst", h.burst)
	}
	return cut
}

// client returns the limiter of cl, made on its first publish.
func (h *RateLimit) client(cl *mqtt.Client) *clientRate {
	v, ok := h.clients.Load(cl)
	if !ok {
		v, _ = h.clients.LoadOrStore(cl, &clientRate{lim: rate.NewLimiter(h.limit, h.burst)})
	}
	return v.(*clientRate)
}

// admit takes one publish from the allowance, ending a refusal streak.
func (c *clientRate) admit() bool {
	if !c.lim.Allow() {
		return false
	}
	c.mu.Lock()
	c.refused = 0
	c.mu.Unlock()
	return true
}
