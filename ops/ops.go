// Package ops serves the operational HTTP endpoints of serve and bridge:
// Prometheus metrics, health, readiness and, on request, pprof.
package ops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"golang.org/x/net/netutil"
)

// Limits of the HTTP port (docs/security.md): without them an idle
// keep-alive connection was held for ever, and a few thousand of them took
// the process's file descriptors from MQTT.
const (
	// DefaultIdleTimeout closes a keep-alive connection idle this long:
	// above Prometheus' usual scrape intervals (15–60 s), so a scraper
	// keeps its connection, and what net/http's clients keep one for.
	DefaultIdleTimeout = 90 * time.Second
	// DefaultMaxConns bounds the connections served at once; more wait in
	// the kernel's backlog, holding no descriptor, until one closes.
	// Scrapers, probes and a few open pages need a handful.
	DefaultMaxConns = 256
	// ReadHeaderTimeout and ReadTimeout bound reading a request (the
	// endpoints take no bodies); WriteTimeout bounds writing an answer,
	// long enough for a 60 s pprof profile or trace. The page's event
	// stream extends its own write deadline per event.
	ReadHeaderTimeout = 5 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 2 * time.Minute
)

// Config configures the operational HTTP server.
type Config struct {
	Addr    string
	Metrics *metrics.Set
	// Ready is nil while /readyz answers 200; otherwise 503 with its error.
	Ready func() error
	Pprof bool
	// Login, when set (serve's --auth), guards /metrics and /debug/pprof/:
	// they need HTTP Basic credentials of an admin user. /healthz and
	// /readyz stay open to probes.
	Login Login
	// IdleTimeout: 0 is DefaultIdleTimeout. MaxConns: 0 is DefaultMaxConns.
	IdleTimeout time.Duration
	MaxConns    int
	Log         *slog.Logger
}

// Server serves /metrics, /healthz, /readyz and, on request, /debug/pprof/:
// the operational endpoints of both serve and bridge.
type Server struct {
	srv *http.Server
	ln  net.Listener
	mux *http.ServeMux
}

// ErrNotReady is the readiness of a server starting or shutting down.
var ErrNotReady = errors.New("fences or retained state not loaded yet, or shutting down")

// ReadyWhen is a readiness for Start: ErrNotReady while ready reports false.
func ReadyWhen(ready func() bool) func() error {
	return func() error {
		if !ready() {
			return ErrNotReady
		}
		return nil
	}
}

// Start listens on addr and serves the metrics of set, anonymously; /readyz
// answers 200 while ready returns nil, 503 with its error otherwise.
func Start(addr string, set *metrics.Set, ready func() error, withPprof bool, log *slog.Logger) (*Server, error) {
	return New(Config{Addr: addr, Metrics: set, Ready: ready, Pprof: withPprof, Log: log})
}

// New listens on cfg.Addr and serves the endpoints as cfg says.
func New(cfg Config) (*Server, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	set, ready, log := cfg.Metrics, cfg.Ready, cfg.Log
	admin := adminOnly(cfg.Login)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", admin(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		set.WritePrometheus(w)
		metrics.WriteProcessMetrics(w)
	})))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := ready(); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	})
	if cfg.Pprof {
		mux.Handle("/debug/pprof/", admin(http.HandlerFunc(pprof.Index)))
		mux.Handle("/debug/pprof/cmdline", admin(http.HandlerFunc(pprof.Cmdline)))
		mux.Handle("/debug/pprof/profile", admin(http.HandlerFunc(pprof.Profile)))
		mux.Handle("/debug/pprof/symbol", admin(http.HandlerFunc(pprof.Symbol)))
		mux.Handle("/debug/pprof/trace", admin(http.HandlerFunc(pprof.Trace)))
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("http listener %s: %w", cfg.Addr, err)
	}
	conns := newConnCount(cfg.MaxConns, set, log)
	h := &Server{ln: ln, mux: mux, srv: &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: ReadHeaderTimeout,
		ReadTimeout:       ReadTimeout,
		WriteTimeout:      WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		ConnState:         conns.state,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}}
	go func() {
		if err := h.srv.Serve(netutil.LimitListener(ln, cfg.MaxConns)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server stopped", "error", err)
		}
	}()
	return h, nil
}

// Handle serves pattern with handler beside the operational endpoints
// (serve's live page); it may be called while the server runs.
func (h *Server) Handle(pattern string, handler http.Handler) { h.mux.Handle(pattern, handler) }

// Addr returns the listener's address (with the port chosen).
func (h *Server) Addr() string { return h.ln.Addr().String() }

// Shutdown stops the server, waiting for requests in progress up to ctx.
func (h *Server) Shutdown(ctx context.Context) error { return h.srv.Shutdown(ctx) }
