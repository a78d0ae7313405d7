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
)

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

// Start listens on addr and serves the metrics of set; /readyz answers
// 200 while ready returns nil, 503 with its error otherwise.
func Start(addr string, set *metrics.Set, ready func() error, withPprof bool, log *slog.Logger) (*Server, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		set.WritePrometheus(w)
		metrics.WriteProcessMetrics(w)
	})
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
	if withPprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("http listener %s: %w", addr, err)
	}
	h := &Server{ln: ln, mux: mux, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}}
	go func() {
		if err := h.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
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
