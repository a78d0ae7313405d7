package broker

import (
	"errors"

	"github.com/edgefence/edgefence/hooks"
	"github.com/edgefence/edgefence/ops"
)

// startHTTP serves the operational endpoints. With --auth, /metrics and
// pprof need an admin user, checked by access like an MQTT login.
func (s *Server) startHTTP(access *hooks.Access) error {
	if s.cfg.HTTPAddr == "" {
		return nil
	}
	cfg := ops.Config{Addr: s.cfg.HTTPAddr, Metrics: s.set, Ready: s.readiness, Pprof: s.cfg.Pprof,
		IdleTimeout: s.cfg.HTTPIdleTimeout, MaxConns: s.cfg.HTTPMaxConns, Log: s.log}
	if s.cfg.Auth != "" {
		cfg.Login = access.Login
	}
	h, err := ops.New(cfg)
	if err != nil {
		return err
	}
	s.http = h
	return nil
}

// httpAuth says in the start-up line what the HTTP port asks of whom.
func (s *Server) httpAuth() string {
	switch {
	case s.cfg.HTTPAddr == "":
		return "off"
	case s.cfg.Auth == "":
		return "none (the page: local Host names only)"
	}
	return "/metrics and pprof: admin; the page: dashboard or admin; /healthz, /readyz: open"
}

// readiness is /readyz's answer: nil once the state is restored and the
// listeners serve, and while every MQTT listener can accept connections.
func (s *Server) readiness() error {
	if !s.ready.Load() {
		return ops.ErrNotReady
	}
	var err error // s.accepting is complete before ready is set
	for _, l := range s.accepting {
		err = errors.Join(err, l.Err())
	}
	return err
}
