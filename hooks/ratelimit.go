package hooks

import (
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
	"golang.org/x/time/rate"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/ingest"
)

// RateLimit caps publish rates by what is published for, not by
// connection, so that reconnecting does not reset a flooder's allowance
// and a gateway carrying many devices on one connection is not limited by
// its connection count:
//   - a publish on a telemetry topic is charged to the topic's device id;
//   - any other publish to the username (with --auth) or the client id.
//
// The limit charged is the publisher's role's (users file limits, or the
// defaults); anonymous clients all get the default. A publish over it is
// refused (MQTT 5 QoS 1: PUBACK 0x97 quota exceeded; 3.1.1 and QoS 2: no
// acknowledgement, so it is resent later; QoS 0: dropped), counted and
// logged; a connection that publishes only refused messages for long
// enough is disconnected.
type RateLimit struct {
	mqtt.HookBase
	filters []ingest.TelemetryFilter
	users   *auth.File // nil: anonymous
	def     auth.Limit // without users, and for roles the file sets no limit for
	admin   auth.Limit
	devices keyTable
	names   keyTable
	clients sync.Map // *mqtt.Client -> *clientRate

	limited   [numLimitReasons]*metrics.Counter
	cut       *metrics.Counter
	loggedRef atomic.Int64 // second of the last refusal logged
	loggedCut atomic.Int64 // second of the last cut-off logged
	log       *slog.Logger
}

// The reasons of edgefence_rate_limited_total.
const (
	limitDevice   = iota // the device's allowance
	limitUser            // the username's
	limitClient          // the client id's (anonymous)
	limitKeysFull        // too many keys tracked: a new one is refused
	numLimitReasons
)

var limitReasonNames = [numLimitReasons]string{"device", "user", "client", "keys_full"}

// clientRate is one connection's state: its limit and principal, and its
// run of refusals.
type clientRate struct {
	limit     auth.Limit
	principal string // username, or client id without users
	reason    int    // limitUser or limitClient
	refused   atomic.Int32
}

// NewRateLimit returns the hook. def is the limit without users, and of
// every role the users file sets none for but admin, which is unlimited
// unless the file says otherwise. filters find the device id of a
// telemetry topic.
func NewRateLimit(def auth.Limit, users *auth.File, filters []ingest.TelemetryFilter, set *metrics.Set, log *slog.Logger) *RateLimit {
	h := &RateLimit{
		filters: filters,
		users:   users,
		def:     def,
		cut:     set.NewCounter(`edgefence_clients_cut_off_total{reason="rate"}`),
		log:     log,
	}
	if users != nil {
		if l, ok := users.Limit(auth.RoleAdmin); ok {
			h.admin = l
		}
	}
	for i, name := range limitReasonNames {
		h.limited[i] = set.NewCounter(`edgefence_rate_limited_total{reason="` + name + `"}`)
	}
	h.devices.init()
	h.names.init()
	return h
}

// ID names the hook.
func (h *RateLimit) ID() string { return "edgefence-rate-limit" }

// Provides says which hook events the hook handles.
func (h *RateLimit) Provides(b byte) bool { return b == mqtt.OnPublish || b == mqtt.OnDisconnect }

// OnPublishInPlace admits or refuses one publish; it runs before the telemetry
// hook, so a refused ping is never decoded, and after mochi's ACL check,
// so a publish is only ever charged to a key its publisher may use.
func (h *RateLimit) OnPublishInPlace(cl *mqtt.Client, pk *packets.Packet) error {
	if cl.Net.Inline {
		return nil // the transition publisher: the server's own output is never limited
	}
	c := h.client(cl)
	if c.limit.Rate <= 0 {
		return nil
	}
	now := time.Now()
	table, key, reason := &h.names, c.principal, c.reason
	if id, ok := h.deviceID(pk.TopicName); ok {
		table, key, reason = &h.devices, id, limitDevice
	}
	switch table.take(key, c.limit, now) {
	case taken:
		c.refused.Store(0)
		return nil
	case full:
		reason = limitKeysFull
	}
	h.limited[reason].Inc()
	n := int(c.refused.Add(1))
	if now.Unix() != h.loggedRef.Load() && h.loggedRef.CompareAndSwap(h.loggedRef.Load(), now.Unix()) {
		h.log.Warn("refused a publish over its rate limit (further refusals this second are only counted in edgefence_rate_limited_total)",
			"client", cl.ID, "username", string(cl.Properties.Username), "key", key, "limited_by", limitReasonNames[reason],
			"topic", pk.TopicName, "qos", pk.FixedHeader.Qos, "limit_per_s", c.limit.Rate, "burst", c.limit.Burst)
	}
	if n == max(2*c.limit.Burst, 20) {
		h.cut.Inc()
		if now.Unix() != h.loggedCut.Load() && h.loggedCut.CompareAndSwap(h.loggedCut.Load(), now.Unix()) {
			h.log.Warn("disconnecting client: publishes only over its rate limit (further cut-offs this second are only counted in edgefence_clients_cut_off_total)",
				"client", cl.ID, "username", string(cl.Properties.Username), "key", key, "remote", cl.Net.Remote,
				"refused_in_a_row", n, "limit_per_s", c.limit.Rate, "burst", c.limit.Burst)
		}
		cl.Stop(packets.ErrQuotaExceeded)
	}
	switch {
	case pk.FixedHeader.Qos == 1 && cl.Properties.ProtocolVersion == 5:
		return errQuotaExceeded // 0x97: the publisher may retry later
	case pk.FixedHeader.Qos > 0:
		return errRejectPacket // not acknowledged: resent later
	}
	return errIgnore // QoS 0: dropped, counted and logged above
}

// OnPublish is OnPublishInPlace on a copy, for mochi's Hook interface;
// mochi calls OnPublishInPlace, which keeps the packet off the reader's
// stack (mochi patch 0024).
func (h *RateLimit) OnPublish(cl *mqtt.Client, pk packets.Packet) (packets.Packet, error) {
	err := h.OnPublishInPlace(cl, &pk)
	return pk, err
}

// OnDisconnect forgets the connection (not its keys' allowances).
func (h *RateLimit) OnDisconnect(cl *mqtt.Client, err error, expire bool) { h.clients.Delete(cl) }

// client returns cl's state, made on its first publish.
func (h *RateLimit) client(cl *mqtt.Client) *clientRate {
	if v, ok := h.clients.Load(cl); ok {
		return v.(*clientRate)
	}
	c := &clientRate{limit: h.def, principal: cl.ID, reason: limitClient}
	if h.users != nil {
		c.principal, c.reason = string(cl.Properties.Username), limitUser
		if u := h.users.User(c.principal); u != nil {
			c.limit = h.roleLimit(u.Role)
		}
	}
	v, _ := h.clients.LoadOrStore(cl, c)
	return v.(*clientRate)
}

// roleLimit is the limit of role: the users file's, else the default
// (admin: none).
func (h *RateLimit) roleLimit(r auth.Role) auth.Limit {
	if l, ok := h.users.Limit(r); ok {
		return l
	}
	if r == auth.RoleAdmin {
		return h.admin
	}
	return h.def
}

// deviceID returns the device id of a telemetry topic.
func (h *RateLimit) deviceID(topic string) (string, bool) {
	for i := range h.filters {
		if id, ok, err := h.filters[i].Match(topic); ok {
			return id, err == nil
		}
	}
	return "", false
}

// Bounds of a key table: an idle key's entry is dropped once its
// allowance has refilled (a new entry would be the same), each shard
// checks for such entries every sweepEvery, and at most maxKeys are kept.
const (
	keyShards  = 64
	maxKeys    = 1 << 18
	sweepEvery = 10 * time.Second
)

// keyTable holds token buckets by key, sharded to keep the lock of one
// publish off the others'.
type keyTable struct {
	seed   maphash.Seed
	shards [keyShards]keyShard
}

type keyShard struct {
	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
	_         [32]byte
}

// bucket is a key's token bucket (x/time/rate's), at the limit it was
// last charged at.
type bucket struct {
	lim   *rate.Limiter
	limit auth.Limit
}

type takeResult uint8

const (
	taken takeResult = iota
	refused
	full // no room for a new key
)

func (t *keyTable) init() {
	t.seed = maphash.MakeSeed()
	for i := range t.shards {
		t.shards[i].buckets = map[string]*bucket{}
	}
}

// take takes one token from key's bucket at limit l.
func (t *keyTable) take(key string, l auth.Limit, now time.Time) takeResult {
	s := &t.shards[maphash.String(t.seed, key)%keyShards]
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastSweep) > sweepEvery {
		s.sweep(now)
	}
	b := s.buckets[key]
	if b == nil {
		if len(s.buckets) >= maxKeys/keyShards {
			s.sweep(now)
			if len(s.buckets) >= maxKeys/keyShards {
				return full
			}
		}
		b = &bucket{lim: rate.NewLimiter(rate.Limit(l.Rate), l.Burst), limit: l}
		s.buckets[strings.Clone(key)] = b // key may be a slice of the packet's topic
	} else if b.limit != l { // the key's publisher changed role
		b.lim.SetLimitAt(now, rate.Limit(l.Rate))
		b.lim.SetBurstAt(now, l.Burst)
		b.limit = l
	}
	if !b.lim.AllowN(now, 1) {
		return refused
	}
	return taken
}

// sweep drops the buckets that have refilled by now.
func (s *keyShard) sweep(now time.Time) {
	s.lastSweep = now
	for k, b := range s.buckets {
		if b.lim.TokensAt(now) >= float64(b.limit.Burst) {
			delete(s.buckets, k)
		}
	}
}
