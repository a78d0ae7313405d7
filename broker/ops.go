package broker

import (
	"errors"

	"github.com/edgefence/edgefence/ops"
)

func (s *Server) startHTTP() error {
	if s.cfg.HTTPAddr == "" {
		return nil
	}
	h, err := ops.Start(s.cfg.HTTPAddr, s.set, s.readiness, s.cfg.Pprof, s.log)
	if err != nil {
		return err
	}
	s.http = h
	return nil
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
