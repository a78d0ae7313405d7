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

// trackerListener is the tracker listener (--tracker-addr): MQTT 3.1.1
// and 5 over TCP for clients that only publish, served by edgefence itself
// with one goroutine per connection.
//
// mochi gives every client two goroutines — a reader whose stack its
// connect path grows to 16 KiB and that its frames keep there, and a
// writer — and an outbound queue allocated whole: about 30 KiB per client
// before it sends anything, 580 MB of RSS at 10,000 paced trackers, of
// which trackers use nothing but the reader. Here a connection is a
// goroutine whose stack the GC shrinks back to 4 KiB once connected, its
// read buffer, and a few hundred bytes of state.
//
// What it does not serve it refuses with a reason code (docs: README,
// "Tracker listener"): subscriptions, QoS 2, sessions. Pings take the path
// the MQTT listener's direct ingest takes; any other publish goes through
// mochi from an inline client, so subscribers, retained messages and the
// store see it as from any client.
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

	mu      sync.Mutex
	clients map[string]*trackerConn // by client id
	conns   map[*trackerConn]struct{}
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
}

func newTrackerMetrics(set *metrics.Set) *trackerMetrics {
	m := &trackerMetrics{closed: map[string]*metrics.Counter{}}
	set.NewGauge(`edgefence_tracker_connections`, func() float64 { return float64(m.connected.Load()) })
	for _, r := range []string{closedBadLogin, closedProtocol, closedUnsupported, closedNotAuthorized, closedTakenOver, closedKeepalive, closedLimit} {
		m.closed[r] = set.NewCounter(fmt.Sprintf(`edgefence_tracker_closed_total{reason=%q}`, r))
	}
	return m
}

// listenTrackers opens the tracker listener. tel is nil with the engine
// off.
func (s *Server) listenTrackers(tel *hooks.Telemetry, access *hooks.Access, rate *hooks.RateLimit) error {
	ln, err := net.Listen("tcp", s.cfg.TrackerAddr)
	if err != nil {
		return fmt.Errorf("tracker listener %s: %w", s.cfg.TrackerAddr, err)
	}
	t := &trackerListener{
		cfg: &s.cfg, log: s.log.With("listener", trackerListenerID), ln: ln, srv: s.mqtt,
		tel: tel, access: access, rate: rate,
		inline:  s.mqtt.NewClient(nil, mqtt.LocalListener, trackerOrigin, true),
		info:    newTrackerMetrics(s.set),
		clients: map[string]*trackerConn{},
		conns:   map[*trackerConn]struct{}{},
	}
	// MQTT 5, for the expiry and properties of what it passes on.
	t.inline.Properties.ProtocolVersion = 5
	s.trackers = t
	if err := s.mqtt.AddHook(&trackerTakeover{t: t}, nil); err != nil {
		_ = ln.Close()
		return err
	}
	t.wg.Add(1)
	go t.accept()
	return nil
}

func (t *trackerListener) addr() string { return t.ln.Addr().String() }

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
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			_ = c.Close()
			continue
		}
		t.conns[tc] = struct{}{}
		t.wg.Add(1)
		t.mu.Unlock()
		go tc.serve()
	}
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
		_ = t.srv.DisconnectClient(cl, packets.ErrSessionTakenOver)
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
	t.mu.Unlock()
	_ = t.ln.Close()
	for _, tc := range conns {
		tc.shutdown()
	}
	t.wg.Wait()
}

// trackerTakeover closes a tracker connection when a client with its id
// connects to the MQTT listener, once that client has logged in.
type trackerTakeover struct {
	mqtt.HookBase
	t *trackerListener
}

// ID names the hook.
func (h *trackerTakeover) ID() string { return "edgefence-tracker-takeover" }

// Provides says which hook events the hook handles.
func (h *trackerTakeover) Provides(b byte) bool { return b == mqtt.OnSessionEstablish }

// OnSessionEstablish runs after a client logged in, before mochi takes
// over a session of its own with the same id.
func (h *trackerTakeover) OnSessionEstablish(cl *mqtt.Client, _ packets.Packet) {
	if cl.ID != "" && !cl.Net.Inline {
		h.t.takeOver(cl.ID)
	}
}
