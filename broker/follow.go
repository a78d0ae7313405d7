package broker

import (
	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/retainfollow"
)

// followSink puts what the cluster follower delivers (serve --cluster)
// into mochi as the transition publisher puts the engine's transitions:
// injected by an inline client under the publisher's id, so the store
// hook does not write the bucket's values to disk (the bucket is where
// they live). One client serves both kinds, as the publisher's does: the
// follower makes one Sink call at a time.
type followSink struct {
	srv    *mqtt.Server
	cl     *mqtt.Client
	failed *metrics.Counter
	s      *Server
}

// startFollow follows the cluster's retained bucket and history stream
// into mochi, and returns once the bucket's current values are retained:
// before the listeners open, so a dashboard's first subscription gets
// the whole state.
func (s *Server) startFollow() error {
	cl := s.mqtt.NewClient(nil, mqtt.LocalListener, publisherID, true)
	cl.Properties.ProtocolVersion = 5
	sink := &followSink{srv: s.mqtt, cl: cl, failed: s.set.GetOrCreateCounter(`edgefence_publish_errors_total`), s: s}
	o := s.cfg.Cluster
	f, err := retainfollow.Start(retainfollow.Options{NATS: o.NATS, Security: o.Security, Name: o.Name, Replicas: o.Replicas,
		Metrics: s.set, Log: s.log}, sink)
	if err != nil {
		return err
	}
	s.follow = f
	return nil
}

// Retain implements retainfollow.Sink.
func (f *followSink) Retain(topic string, body []byte) { f.inject(topic, body, true) }

// Publish implements retainfollow.Sink.
func (f *followSink) Publish(topic string, body []byte) { f.inject(topic, body, false) }

func (f *followSink) inject(topic string, body []byte, retain bool) {
	pk := packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1, Retain: retain},
		TopicName:   topic,
		Payload:     body,
		PacketID:    1, // mochi validates it; the inline path never acks
		Properties: packets.Properties{
			ContentType:       "application/json",
			PayloadFormat:     1, // UTF-8
			PayloadFormatFlag: true,
		},
	}
	if err := f.srv.InjectPacket(f.cl, pk); err != nil {
		f.failed.Inc()
		f.s.log.Error("publish failed", "topic", topic, "error", err)
	}
}
