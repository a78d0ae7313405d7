package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/broker/acceptwatch"
	"github.com/edgefence/edgefence/broker/mochilog"
	"github.com/edgefence/edgefence/broker/wslistener"
	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/dashboard"
	"github.com/edgefence/edgefence/evaluator/sharded"
	"github.com/edgefence/edgefence/evaluator/stats"
	"github.com/edgefence/edgefence/fencefile"
	"github.com/edgefence/edgefence/homeassistant"
	"github.com/edgefence/edgefence/hooks"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/ops"
	"github.com/edgefence/edgefence/pingstream"
	"github.com/edgefence/edgefence/retainfollow"
	"github.com/edgefence/edgefence/store"
)

// Server is a running edgefence broker.
type Server struct {
	cfg       Config
	log       *slog.Logger
	set       *metrics.Set
	mqtt      *mqtt.Server
	mqttLog   *mochilog.Gate // mochi's lines, held until the start succeeds
	engine    *sharded.Engine
	capture   *capture.Writer        // nil without --capture
	cluster   *pingstream.Publisher  // nil without --cluster
	follow    *retainfollow.Follower // nil without --cluster
	pub       *publisher
	store     *store.Store // nil without --data-dir
	sockets   sockets      // bound, not yet mochi's
	tcp       *listeners.Net
	tls       *listeners.Net
	ws        *wslistener.Listener
	http      *ops.Server              // nil without --http-addr
	dash      *dashboard.Dashboard     // nil without --http-addr or with --engine=off
	ha        *homeassistant.Discovery // nil without --homeassistant
	owntracks *owntracksHook           // nil without --owntracks-events
	ready     atomic.Bool
	closed    atomic.Bool

	fences *fencefile.FenceFile

	notOurs *metrics.Counter // stored transitions the server did not write, refused at restore
	conns   connSet          // the MQTT listeners' connections

	accepting []*acceptwatch.Listener // the MQTT listeners' sockets, for /readyz
}

// Start loads the fences, opens the store, restores the retained fence
// state into the engine, and only then opens the MQTT listener, so that no
// ping is evaluated against a state that is not yet restored.
func Start(cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.ExitExpiry < time.Second || cfg.ExitExpiry > math.MaxUint32*time.Second {
		return nil, fmt.Errorf("exit expiry %v: must be between 1s and %v (an MQTT 5 expiry is whole seconds)", cfg.ExitExpiry, math.MaxUint32*time.Second)
	}
	if err := cfg.checkExposure(); err != nil {
		return nil, err
	}
	if err := cfg.validateClients(); err != nil {
		return nil, err
	}
	if cfg.MaxSessionExpiry < 0 || cfg.MaxSessionExpiry > math.MaxUint32*time.Second {
		return nil, fmt.Errorf("--max-session-expiry %v: must be between 0 and %v (an MQTT 5 expiry is whole seconds)", cfg.MaxSessionExpiry, math.MaxUint32*time.Second)
	}
	if _, err := dashboard.ParseTiles(cfg.MapTiles, cfg.MapAttribution); err != nil {
		return nil, err
	}
	if cfg.Cluster != nil && (cfg.EngineOff || cfg.Capture != "") {
		return nil, errors.New("--cluster sends the pings to the cluster's workers: --engine=off and --capture, which are about the local engine, do not go with it")
	}
	if cfg.StrictClientIDs && cfg.Auth == "" {
		return nil, errors.New("--strict-client-ids needs --auth: without users, a client id is nobody's")
	}
	var users *auth.File
	if cfg.Auth != "" {
		var err error
		if users, err = auth.Load(cfg.Auth); err != nil {
			return nil, err
		}
	}
	tlsConfig, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	ff, fences, err := fencefile.Open(cfg.Fences, cfg.Log)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Log, set: metrics.NewSet(), fences: ff}
	if err := s.bindAll(tlsConfig); err != nil {
		return nil, s.abort(err)
	}
	caps := mqtt.NewDefaultServerCapabilities()
	// mochi would delete every retained message older than this, erasing
	// the state of a device parked in a fence for a day; EXITs carry their
	// own expiry instead.
	caps.MaximumMessageExpiryInterval = 0
	caps.MaximumPacketSize = cfg.MaxPacketSize
	caps.MaximumClients = cfg.MaxConnections
	// A kept session, and with --auth the claim on its client id, ends at
	// the latest this long after its connection (mochi: never).
	caps.MaximumSessionExpiryInterval = uint32(cfg.MaxSessionExpiry / time.Second)
	caps.MaximumClientWritesPending = cfg.ClientQueueFor()
	caps.MaximumInflight = cfg.MaxInflight
	// mochi would otherwise echo a publisher's User Properties in its
	// PUBACK, with reason code 0x01, which Paho's MQTT 5 clients refuse.
	caps.Compatibilities.NoInheritedPropertiesOnAck = true
	var mqttLog slog.Handler
	mqttLog, s.mqttLog = mochilog.Hold(mochilog.Quiet(cfg.Log.Handler()))
	s.mqtt = mqtt.New(&mqtt.Options{
		Capabilities:             caps,
		ClientNetReadBufferSize:  cfg.ClientReadBuffer,
		ClientNetWriteBufferSize: cfg.ClientWriteBuffer,
		Logger:                   slog.New(mqttLog).With("component", "mqtt"),
		// The live page subscribes through mochi's inline client.
		// So do Home Assistant discovery and OwnTracks events publish.
		InlineClient: (cfg.HTTPAddr != "" || cfg.HomeAssistant != "" || cfg.OwnTracksEvents) && !cfg.EngineOff,
	})
	// The only auth hook: mochi OR-s the answers of auth hooks, so an
	// allow-all hook beside it would open everything.
	access := hooks.NewAccess(users, cfg.Telemetry, cfg.TransitionPrefix, cfg.LateTopic, cfg.RejectTopic, cfg.Log)
	access.CountIn(s.set)
	if err := s.startHTTP(access); err != nil {
		return nil, s.abort(err)
	}
	if cfg.StrictClientIDs {
		access.RequireOwnClientIDs()
	}
	if cfg.HomeAssistant != "" && !cfg.EngineOff {
		hc := s.haConfig()
		access.ServerTopics(hc.Topics()...)
	}
	if err := s.mqtt.AddHook(access, nil); err != nil {
		return nil, s.abort(err)
	}
	if cfg.PublishRate > 0 || users != nil && users.HasLimits() {
		// Before the telemetry hook: a refused publish is never decoded.
		limit := hooks.NewRateLimit(auth.Limit{Rate: cfg.PublishRate, Burst: cfg.PublishBurst}, users, cfg.Telemetry, s.set, cfg.Log)
		if err := s.mqtt.AddHook(limit, nil); err != nil {
			return nil, s.abort(err)
		}
	}
	if cfg.EngineOff {
		return s.startBare(tlsConfig)
	}
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return nil, s.abort(fmt.Errorf("data dir: %w", err))
		}
		s.store, err = store.Open(cfg.DataDir, store.Options{Log: cfg.Log, Metrics: s.set, Own: publisherID, Withhold: cfg.TransitionPrefix + "/"})
		if err != nil {
			return nil, s.abort(fmt.Errorf("open store in %s: %w", cfg.DataDir, err))
		}
		if err := s.mqtt.AddHook(s.store, nil); err != nil {
			return nil, s.abort(err)
		}
	}
	s.pub = newPublisher(s.mqtt, s.store, &s.cfg, s.set, cfg.Log)
	em := stats.NewMetrics(s.set)
	if s.engine, err = sharded.New(cfg.Engine, fences, s.pub, em); err != nil {
		return nil, s.abort(err)
	}
	s.registerGauges()
	s.fences.Attach(s.engine, s.set)
	reader := ingest.NewReader(cfg.Telemetry, s.engine, s.pub, ingest.NewMetrics(s.set), cfg.Log, cfg.MaxPayload)
	if cfg.Cluster != nil {
		o := *cfg.Cluster
		o.Telemetry, o.Metrics, o.Log = cfg.Telemetry, s.set, cfg.Log
		if s.cluster, err = pingstream.Dial(o); err != nil {
			return nil, s.abort(err)
		}
		reader.Forwarding(s.cluster)
	}
	if cfg.Capture != "" {
		if err := s.startCapture(reader); err != nil {
			return nil, s.abort(err)
		}
	}
	if err := s.mqtt.AddHook(hooks.NewAdmin(s.ApplyFences), nil); err != nil {
		return nil, s.abort(err)
	}
	tel := hooks.NewTelemetry(reader, cfg.Log)
	// A QoS 1 ping waits for the ping stream in its PUBACK, not in its
	// connection's reader: a gateway's connection carries more than one
	// ping a round trip. As many as an MQTT 5 client may send unanswered.
	tel.DeferAcks(int(caps.ReceiveMaximum))
	if err := s.mqtt.AddHook(tel, nil); err != nil {
		return nil, s.abort(err)
	}
	if cfg.OwnTracksEvents {
		if err := s.startOwnTracks(); err != nil {
			return nil, s.abort(err)
		}
	}
	if s.http != nil {
		if err := s.startDashboard(access); err != nil {
			return nil, s.abort(err)
		}
	}
	if err := s.mqtt.Serve(); err != nil { // loads the store; no listener yet
		return nil, s.abort(err)
	}
	tel.Watch(s.mqtt) // stored sessions' subscriptions are loaded now
	s.notOurs = s.set.NewCounter(`edgefence_restore_refused_total{reason="not_server"}`)
	n, err := s.restore()
	if err != nil {
		return nil, s.abort(fmt.Errorf("restore retained state: %w", err))
	}
	// Restored state may name fences removed while the broker was down.
	if err := s.engine.Reconcile(); err != nil {
		return nil, s.abort(err)
	}
	if cfg.Cluster != nil {
		if err := s.startFollow(); err != nil {
			return nil, s.abort(err)
		}
	}
	if cfg.HomeAssistant != "" {
		if err := s.startHomeAssistant(); err != nil {
			return nil, s.abort(err)
		}
	}
	if err := s.listen(tlsConfig); err != nil {
		return nil, s.abort(err)
	}
	if cfg.FencesPoll > 0 {
		s.fences.Poll(cfg.FencesPoll)
	}
	s.ready.Store(true)
	s.mqttLog.Release()
	s.log.Info("edgefence serving", "mqtt", s.MQTTAddr(), "mqtts", s.TLSAddr(), "ws", s.WSAddr(), "http", s.HTTPAddr(),
		"cluster", cfg.Cluster != nil, "auth", cfg.Auth != "", "http_auth", s.httpAuth(), "fences", fences.Len(), "restored_states", n, "data_dir", cfg.DataDir)
	return s, nil
}

// abort undoes a partial start.
func (s *Server) abort(err error) error {
	if s.mqttLog != nil {
		s.mqttLog.Drop()
	}
	_ = s.Close(context.Background())
	return err
}

func (s *Server) registerGauges() {
	s.engine.RegisterGauges(s.set)
	s.set.NewGauge(`edgefence_publish_queue`, func() float64 { return float64(len(s.pub.queue)) })
	s.registerMQTTGauges()
}

// registerMQTTGauges exposes figures mochi keeps itself.
func (s *Server) registerMQTTGauges() {
	// A counter, read from mochi: outbound QoS 1/2 messages it dropped for
	// a subscriber at --max-inflight unacknowledged ones (it logs those,
	// see mochilog, but calls no hook).
	s.set.NewGauge(`edgefence_shed_total{stage="subscriber_inflight"}`, func() float64 {
		return float64(atomic.LoadInt64(&s.mqtt.Info.InflightDropped))
	})
	s.set.NewGauge(`edgefence_mqtt_clients_connected`, func() float64 {
		return float64(atomic.LoadInt64(&s.mqtt.Info.ClientsConnected))
	})
	s.set.NewGauge(`edgefence_mqtt_retained_messages`, func() float64 {
		return float64(s.mqtt.Topics.Retained.Len()) // Info.Retained misses what was loaded from the store
	})
}

// closeListeners stops accepting connections and disconnects every client,
// before mochi's Close. mochi closes a listener's clients from a list it
// takes under its clients' read lock, taken twice over (Clients.Len inside
// Clients.GetByListener): a client removing itself at that moment waits for
// the write lock, the second read lock waits behind it, and Close hangs
// (seen in the tests, ~1 close in 10). A listener calls its closer once, so
// mochi's Close then only waits for the clients' goroutines to end.
func (s *Server) closeListeners() {
	noop := func(string) {}
	if s.tcp != nil {
		s.tcp.Close(noop)
	}
	if s.tls != nil {
		s.tls.Close(noop)
	}
	if s.ws != nil {
		s.ws.Close(noop)
	}
	for _, cl := range s.mqtt.Clients.GetAll() { // one read lock
		_ = s.mqtt.DisconnectClient(cl, packets.ErrServerShuttingDown)
	}
	s.conns.close() // and those that are no client yet
}

// MQTTAddr returns the MQTT listener's address (with the port chosen).
func (s *Server) MQTTAddr() string {
	if s.tcp == nil {
		return ""
	}
	return s.tcp.Address()
}

// HTTPAddr returns the HTTP listener's address, or "".
func (s *Server) HTTPAddr() string {
	if s.http == nil {
		return ""
	}
	return s.http.Addr()
}

// Engine returns the running engine (for fence swaps and tests).
func (s *Server) Engine() *sharded.Engine { return s.engine }

// Metrics returns the set served on /metrics: serve --cluster's
// in-process worker counts there, its engines through the engine's
// handles (Engine().Metrics()).
func (s *Server) Metrics() *metrics.Set { return s.set }

// Close shuts down in the order that loses nothing: the engine first
// (flushing every reorder buffer; their transitions go out while mochi
// still runs and stores them), then the capture file (every accepted ping
// is in it by then), then the publisher, then mochi itself,
// whose Close is bounded because it was seen to hang with thousands of
// clients mid-stream.
func (s *Server) Close(ctx context.Context) error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.ready.Store(false)
	var err error
	if s.dash != nil {
		err = s.dash.Close() // ends the page's event streams, which the HTTP shutdown would wait for
	}
	if s.fences != nil {
		s.fences.Close()
	}
	if s.engine != nil {
		s.engine.Close()
	}
	if s.capture != nil {
		// After the engine: no ping is accepted any more, so every
		// accepted one is in the file.
		err = errors.Join(err, s.capture.Close())
	}
	if s.pub != nil {
		s.pub.close()
	}
	if s.follow != nil {
		s.follow.Close() // it injects into mochi
	}
	if s.owntracks != nil {
		s.owntracks.close()
	}
	if s.ha != nil {
		err = errors.Join(err, s.ha.Close()) // marks its entities unavailable, while mochi runs
	}
	if s.mqtt != nil {
		ctx, cancel := context.WithTimeout(ctx, s.cfg.CloseTimeout)
		defer cancel()
		done := make(chan error, 1)
		go func() {
			s.closeListeners()
			done <- s.mqtt.Close()
		}()
		select {
		case merr := <-done:
			err = errors.Join(err, merr)
		case <-ctx.Done():
			err = errors.Join(err, fmt.Errorf("mqtt close: %w", ctx.Err()))
			s.log.Error("mqtt server did not close in time; exiting anyway", "timeout", s.cfg.CloseTimeout)
		}
	}
	if s.cluster != nil {
		// After mochi: no hook publishes any more.
		s.cluster.Close(ctx)
	}
	if s.store != nil {
		// mochi closes its hooks, but not if its close timed out above.
		err = errors.Join(err, s.store.Close())
	}
	if s.http != nil {
		err = errors.Join(err, s.http.Shutdown(ctx))
	}
	s.sockets.close() // a start that failed before listening
	return err
}
