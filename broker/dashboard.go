package broker

import (
	"net/http"
	"sync/atomic"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/dashboard"
	"github.com/edgefence/edgefence/hooks"
	"github.com/edgefence/edgefence/ops"
)

// startDashboard mounts the live page on the HTTP port. It subscribes
// before mochi loads the retained messages, which the page does not want
// replayed as if they were happening now.
func (s *Server) startDashboard(access *hooks.Access) error {
	cfg := dashboard.Config{
		TransitionPrefix: s.cfg.TransitionPrefix,
		LateTopic:        s.cfg.LateTopic,
		RejectTopic:      s.cfg.RejectTopic,
		Tiles:            s.cfg.MapTiles,
		Attribution:      s.cfg.MapAttribution,
		Log:              s.log.With("component", "dashboard"),
	}
	if s.cfg.Auth != "" {
		cfg.Login = access.Login
	}
	d, err := dashboard.New(cfg, s.engine, &inlineFeed{srv: s.mqtt})
	if err != nil {
		return err
	}
	s.dash = d
	var page http.Handler = d
	if s.cfg.Auth == "" {
		page = ops.CheckHost(s.cfg.HTTPAddr, d) // anonymous: no DNS rebinding
	}
	for _, p := range d.Patterns() {
		s.http.Handle(p, page)
	}
	return nil
}

// inlineFeed subscribes through mochi's inline client: the page gets what
// a subscriber to the same filters gets, routed by mochi.
type inlineFeed struct {
	srv  *mqtt.Server
	last atomic.Int32 // subscription ids
}

func (f *inlineFeed) Subscribe(filter string, fn func(topic string, payload []byte)) (func(), error) {
	id := int(f.last.Add(1))
	err := f.srv.Subscribe(filter, id, func(_ *mqtt.Client, _ packets.Subscription, pk packets.Packet) {
		fn(pk.TopicName, pk.Payload)
	})
	if err != nil {
		return nil, err
	}
	return func() { _ = f.srv.Unsubscribe(filter, id) }, nil
}
