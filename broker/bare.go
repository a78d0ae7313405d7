package broker

import (
	"crypto/tls"

	"github.com/edgefence/edgefence/fencefile"
)

// ErrEngineOff is returned by fence operations of a broker started with
// the engine off.
var ErrEngineOff = fencefile.ErrEngineOff

// startBare finishes Start with the engine off: mochi with the access
// (and rate limit) hooks only, the same listeners and HTTP endpoints, and
// nothing of edgefence's own in the publish path. No telemetry hook, no
// engine, no publisher, no store: pings are routed like any broker's and
// nothing is evaluated. It is the baseline the load harness measures the
// engine's cost against.
func (s *Server) startBare(tc *tls.Config) (*Server, error) {
	s.registerMQTTGauges()
	if err := s.mqtt.Serve(); err != nil {
		return nil, s.abort(err)
	}
	if err := s.listen(tc); err != nil {
		return nil, s.abort(err)
	}
	s.ready.Store(true)
	s.mqttLog.Release()
	s.log.Info("edgefence serving with the engine off (a bare MQTT broker)", "mqtt", s.MQTTAddr(), "mqtts", s.TLSAddr(),
		"ws", s.WSAddr(), "http", s.HTTPAddr(), "auth", s.cfg.Auth != "")
	return s, nil
}
