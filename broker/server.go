package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/storage/bolt"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
	"go.etcd.io/bbolt"

	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/hooks"
)

// Server is a running edgefence broker.
type Server struct {
	cfg     Config
	log     *slog.Logger
	set     *metrics.Set
	mqtt    *mqtt.Server
	engine  *evaluator.Engine
	capture *capture.Writer // nil without --capture
	pub     *publisher
	tcp     *listeners.TCP
	httpSrv *http.Server
	httpLn  net.Listener
	ready   atomic.Bool
	closed  atomic.Bool
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
	fences, err := fence.Load(cfg.Fences)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Log, set: metrics.NewSet()}
	if err := s.startHTTP(); err != nil {
		return nil, err
	}
	caps := mqtt.NewDefaultServerCapabilities()
	// mochi would delete every retained message older than this, erasing
	// the state of a device parked in a fence for a day; EXITs carry their
	// own expiry instead.
	caps.MaximumMessageExpiryInterval = 0
	s.mqtt = mqtt.New(&mqtt.Options{
		Capabilities: caps,
		Logger:       slog.New(quietHandler{cfg.Log.Handler()}).With("component", "mqtt"),
	})
	// mochi refuses every CONNECT and every publish and subscribe without
	// an auth hook; edgefence serves trackers on a trusted network.
	if err := s.mqtt.AddHook(new(allowHook), nil); err != nil {
		return nil, s.abort(err)
	}
	if cfg.DataDir != "" {
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return nil, s.abort(fmt.Errorf("data dir: %w", err))
		}
		path := filepath.Join(cfg.DataDir, "edgefence.db")
		err := s.mqtt.AddHook(new(bolt.Hook), &bolt.Options{
			Path:    path,
			Options: &bbolt.Options{Timeout: 2 * time.Second}, // another instance holds the lock: fail, do not hang
		})
		if err != nil {
			return nil, s.abort(fmt.Errorf("open store %s: %w", path, err))
		}
	}
	s.pub = newPublisher(s.mqtt, &s.cfg, s.set, cfg.Log)
	em := evaluator.NewMetrics(s.set)
	if s.engine, err = evaluator.New(cfg.Engine, fences, s.pub, em); err != nil {
		return nil, s.abort(err)
	}
	s.registerGauges(fences)
	hm := hooks.NewMetrics(s.set)
	var eng hooks.Engine = s.engine
	if cfg.Capture != "" {
		if eng, err = s.startCapture(); err != nil {
			return nil, s.abort(err)
		}
	}
	tel := hooks.NewTelemetry(cfg.Telemetry, eng, s.pub, hm, cfg.Log, cfg.MaxPayload)
	if err := s.mqtt.AddHook(tel, nil); err != nil {
		return nil, s.abort(err)
	}
	if err := s.mqtt.Serve(); err != nil { // loads the store; no listener yet
		return nil, s.abort(err)
	}
	n, err := s.restore()
	if err != nil {
		return nil, s.abort(fmt.Errorf("restore retained state: %w", err))
	}
	s.tcp = listeners.NewTCP(listeners.Config{ID: "tcp", Address: cfg.MQTTAddr})
	if err := s.mqtt.AddListener(s.tcp); err != nil {
		return nil, s.abort(fmt.Errorf("mqtt listener %s: %w", cfg.MQTTAddr, err))
	}
	s.mqtt.Listeners.Serve(s.tcp.ID(), s.mqtt.EstablishConnection)
	s.ready.Store(true)
	s.log.Info("edgefence serving", "mqtt", s.MQTTAddr(), "http", s.HTTPAddr(),
		"fences", fences.Len(), "restored_states", n, "data_dir", cfg.DataDir)
	return s, nil
}

// allowHook lets every client connect, publish and subscribe (mochi's
// auth.AllowHook, whose package would pull in a YAML dependency).
type allowHook struct{ mqtt.HookBase }

func (h *allowHook) ID() string { return "edgefence-allow-all" }

func (h *allowHook) Provides(b byte) bool {
	return b == mqtt.OnConnectAuthenticate || b == mqtt.OnACLCheck
}

func (h *allowHook) OnConnectAuthenticate(*mqtt.Client, packets.Packet) bool { return true }

func (h *allowHook) OnACLCheck(*mqtt.Client, string, bool) bool { return true }

// abort undoes a partial start.
func (s *Server) abort(err error) error {
	_ = s.Close(context.Background())
	return err
}

func (s *Server) registerGauges(fences *fence.Set) {
	s.set.NewGauge(`edgefence_active_devices`, func() float64 { return float64(s.engine.Stats().Devices) })
	s.set.NewGauge(`edgefence_buffered_pings`, func() float64 { return float64(s.engine.Stats().Buffered) })
	s.set.NewGauge(`edgefence_queued_pings`, func() float64 { return float64(s.engine.Stats().Queued) })
	s.set.NewGauge(`edgefence_fences`, func() float64 { return float64(s.engine.Fences().Len()) })
	s.set.NewGauge(`edgefence_publish_queue`, func() float64 { return float64(len(s.pub.queue)) })
	s.set.NewGauge(`edgefence_mqtt_clients_connected`, func() float64 {
		return float64(atomic.LoadInt64(&s.mqtt.Info.ClientsConnected))
	})
	s.set.NewGauge(`edgefence_mqtt_retained_messages`, func() float64 {
		return float64(atomic.LoadInt64(&s.mqtt.Info.Retained))
	})
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
	if s.httpLn == nil {
		return ""
	}
	return s.httpLn.Addr().String()
}

// Engine returns the running engine (for fence swaps and tests).
func (s *Server) Engine() *evaluator.Engine { return s.engine }

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
	if s.engine != nil {
		s.engine.Close()
	}
	var err error
	if s.capture != nil {
		// After the engine: no ping is accepted any more, so every
		// accepted one is in the file.
		err = s.capture.Close()
	}
	if s.pub != nil {
		s.pub.close()
	}
	if s.mqtt != nil {
		ctx, cancel := context.WithTimeout(ctx, s.cfg.CloseTimeout)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- s.mqtt.Close() }()
		select {
		case merr := <-done:
			err = errors.Join(err, merr)
		case <-ctx.Done():
			err = errors.Join(err, fmt.Errorf("mqtt close: %w", ctx.Err()))
			s.log.Error("mqtt server did not close in time; exiting anyway", "timeout", s.cfg.CloseTimeout)
		}
	}
	if s.httpSrv != nil {
		err = errors.Join(err, s.httpSrv.Shutdown(ctx))
	}
	return err
}
