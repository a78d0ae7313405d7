package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/hooks"
)

// trackerListener is the tracker path: edgefence serving MQTT 3.1, 3.1.1
// and 5 clients that publish itself, one goroutine per connection — all
// of the tracker listener's (--tracker-addr), and the MQTT TCP listener's
// until one needs mochi (--light-trackers, trackerpromote.go).
//
// mochi gives every client two goroutines — a reader whose stack its
// connect path grows to 16 KiB and that its frames keep there, and a
// writer — and an outbound queue allocated whole: about 30 KiB per client
// before it sends anything, 580 MB of RSS at 10,000 paced trackers, of
// which trackers use nothing but the reader. Here a connection is a
// goroutine that waits about 1 KiB deep (its stack 4 KiB once a GC has
// shrunk it; 8 KiB under load, its reader running the engine), its read
// buffer, and a few hundred bytes of state.
//
// What the tracker listener does not serve it refuses with a reason code
// (docs/listeners.md, "Tracker listener"): subscriptions, QoS 2, sessions. Pings
// take the path the MQTT listener's direct ingest takes; any other publish
// goes through mochi from an inline client, so subscribers, retained
// messages and the store see it as from any client.
type trackerListener struct {
	cfg    *Config
	log    *slog.Logger
	ln     net.Listener
	srv    *mqtt.Server
	tel    *hooks.Telemetry // nil with the engine off: every publish goes through mochi
	access *hooks.Access
	rate   *hooks.RateLimit // nil: no rate limit
	inline *mqtt.Client     // publishes what is not a ping, and wills
	info   *trackerMetrics
	taken  *metrics.Counter // edgefence_pings_direct_total: pings read off the connection

	mu      sync.Mutex
	clients map[string]*trackerConn // by client id
	conns   map[*trackerConn]struct{}
	handing map[net.Conn]struct{} // handed to mochi, not yet among its clients
	closed  bool
	wg      sync.WaitGroup

	assigned atomic.Uint64 // client ids assigned so far
	logged   atomic.Int64  // the second of the last warning on a per-packet path
}

// warn logs one line a second at most: a misbehaving fleet must not flood
// the log; the counters have the totals.
func (t *trackerListener) warn(msg string, args ...any) {
	if now, last := time.Now().Unix(), t.logged.Load(); last != now && t.logged.CompareAndSwap(last, now) {
		t.log.Warn(msg+" (further warnings this second are only counted)", args...)
	}
}

// trackerOrigin is the client id of the inline client that publishes the
// tracker listener's non-telemetry messages and wills.
const trackerOrigin = "edgefence-trackers"

// trackerListenerID names the listener in mochi's client records and logs.
const trackerListenerID = "tracker"

// Reasons a tracker connection was closed by the server, the label of
// edgefence_tracker_closed_total.
const (
	closedBadLogin      = "bad_login"
	closedProtocol      = "protocol"
	closedUnsupported   = "unsupported"
	closedNotAuthorized = "not_authorized"
	closedTakenOver     = "taken_over"
	closedKeepalive     = "keepalive"
	closedLimit         = "limit"
)

// trackerMetrics are the listener's metrics.
type trackerMetrics struct {
	connected atomic.Int64
	closed    map[string]*metrics.Counter
	promoted  *metrics.Counter // light connections handed to mochi
}

func newTrackerMetrics(set *metrics.Set) *trackerMetrics {
	m := &trackerMetrics{closed: map[string]*metrics.Counter{}, promoted: set.NewCounter(`edgefence_tracker_promoted_total`)}
	set.NewGauge(`edgefence_tracker_connections`, func() float64 { return float64(m.connected.Load()) })
	for _, r := range []string{closedBadLogin, closedProtocol, closedUnsupported, closedNotAuthorized, closedTakenOver, closedKeepalive, closedLimit} {
		m.closed[r] = set.NewCounter(fmt.Sprintf(`edgefence_tracker_closed_total{reason=%q}`, r))
	}
	return m
}

// newTrackers makes the tracker path: for the tracker listener's
// connections and, with LightTrackers, the MQTT TCP listener's. tel is nil
// with the engine off.
func (s *Server) newTrackers(tel *hooks.Telemetry, access *hooks.Access, rate *hooks.RateLimit) error {
	t := &trackerListener{
		cfg: &s.cfg, log: s.log.With("listener", trackerListenerID), srv: s.mqtt,
		tel: tel, access: access, rate: rate,
		inline:  s.mqtt.NewClient(nil, mqtt.LocalListener, trackerOrigin, true),
		info:    newTrackerMetrics(s.set),
		taken:   s.set.GetOrCreateCounter(`edgefence_pings_direct_total`),
		clients: map[string]*trackerConn{},
		conns:   map[*trackerConn]struct{}{},
		handing: map[net.Conn]struct{}{},
	}
	// MQTT 5, for the expiry and properties of what it passes on.
	t.inline.Properties.ProtocolVersion = 5
	s.trackers = t
	return s.mqtt.AddHook(&trackerHook{t: t}, nil)
}

// listen opens the tracker listener on addr.
func (t *trackerListener) listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("tracker listener %s: %w", addr, err)
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ln.Close()
	}
	t.ln = ln
	t.wg.Add(1)
	t.mu.Unlock()
	go t.accept()
	return nil
}

func (t *trackerListener) addr() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ln == nil {
		return ""
	}
	return t.ln.Addr().String()
}

// accept serves each connection on a goroutine of its own until the
// listener is closed.
func (t *trackerListener) accept() {
	defer t.wg.Done()
	var backoff time.Duration
	for {
		c, err := t.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors, most likely: wait as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			t.log.Warn("tracker listener: accept failed", "error", err, "retry_in", backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		tc := newTrackerConn(t, c)
		if !t.add(tc) {
			continue
		}
		go tc.serve()
	}
}

// add records a new connection and counts its goroutine; it fails, and
// closes the connection, when the listener is closing.
func (t *trackerListener) add(tc *trackerConn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		_ = tc.c.Close()
		return false
	}
	t.conns[tc] = struct{}{}
	t.wg.Add(1)
	return true
}

// register records tc as client id, closing the connection that had the
// id on either listener (MQTT-3.1.4-3). It fails when the listener is
// closing.
func (t *trackerListener) register(tc *trackerConn) bool {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return false
	}
	old := t.clients[tc.id]
	t.clients[tc.id] = tc
	t.mu.Unlock()
	if old != nil {
		old.takenOver()
	}
	if cl, ok := t.srv.Clients.Get(tc.id); ok && !cl.Net.Inline {
		// Its session ends too, as mochi ends one a clean start takes
		// over: nothing is to be queued for the id any more.
		_ = t.srv.DisconnectClient(cl, packets.ErrSessionTakenOver)
		t.srv.UnsubscribeClient(cl)
		cl.ClearInflights()
	}
	return true
}

// done forgets a connection that has ended.
func (t *trackerListener) done(tc *trackerConn) {
	t.mu.Lock()
	delete(t.conns, tc)
	if tc.id != "" && t.clients[tc.id] == tc {
		delete(t.clients, tc.id)
	}
	t.mu.Unlock()
	t.wg.Done()
}

// takeOver closes the tracker connection with client id, if any: a
// client with that id has connected to the MQTT listener.
func (t *trackerListener) takeOver(id string) {
	t.mu.Lock()
	old := t.clients[id]
	if old != nil {
		delete(t.clients, id)
	}
	t.mu.Unlock()
	if old != nil {
		old.takenOver()
	}
}

// close stops accepting, closes every connection (MQTT 5 clients are told
// the server is shutting down) and waits for their goroutines.
func (t *trackerListener) close() {
	t.mu.Lock()
	t.closed = true
	conns := make([]*trackerConn, 0, len(t.conns))
	for tc := range t.conns {
		conns = append(conns, tc)
	}
	// A client mochi is still taking over (checking its password, say)
	// would be among mochi's clients only after the server has
	// disconnected them, and mochi's Close would wait for it: its socket
	// is closed here instead.
	for c := range t.handing {
		_ = c.Close()
	}
	ln := t.ln
	t.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	for _, tc := range conns {
		tc.shutdown()
	}
	t.wg.Wait()
}

// trackerHook closes a tracker connection when a client with its id
// connects to mochi, once that client has logged in, and gives a client
// mochi took over from the tracker path the topic aliases it had set.
type trackerHook struct {
	mqtt.HookBase
	t *trackerListener
}

// ID names the hook.
func (h *trackerHook) ID() string { return "edgefence-trackers" }

// Provides says which hook events the hook handles.
func (h *trackerHook) Provides(b byte) bool {
	return b == mqtt.OnSessionEstablish || b == mqtt.OnSessionEstablished
}

// OnSessionEstablish runs after a client logged in, before mochi takes
// over a session of its own with the same id.
func (h *trackerHook) OnSessionEstablish(cl *mqtt.Client, _ packets.Packet) {
	if cl.ID != "" && !cl.Net.Inline {
		h.t.takeOver(cl.ID)
	}
}

// OnSessionEstablished runs on the client's reader after CONNACK, before
// mochi reads the packet the tracker path handed over with the client.
func (h *trackerHook) OnSessionEstablished(cl *mqtt.Client, _ packets.Packet) {
	if c, ok := cl.Net.Conn.(*coalescingConn); ok {
		if rc, ok := c.Conn.(*replayConn); ok {
			for id, topic := range rc.aliases {
				cl.State.TopicAliases.Inbound.Set(id, topic)
			}
			h.t.handed(rc) // among mochi's clients now
		}
	}
}
