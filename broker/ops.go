package broker

import "github.com/edgefence/edgefence/ops"

func (s *Server) startHTTP() error {
	if s.cfg.HTTPAddr == "" {
		return nil
	}
	h, err := ops.Start(s.cfg.HTTPAddr, s.set, s.ready.Load, s.cfg.Pprof, s.log)
	if err != nil {
		return err
	}
	s.http = h
	return nil
}
