package broker

import (
	"github.com/edgefence/edgefence/homeassistant"
)

// startHomeAssistant starts the Home Assistant discovery (--homeassistant)
// once the engine's state is restored, so a restart announces the
// devices it kept and removes those it did not.
func (s *Server) startHomeAssistant() error {
	d, err := homeassistant.Start(s.haConfig(), s.engine, inlineBroker{s})
	if err != nil {
		return err
	}
	s.ha = d
	return nil
}

func (s *Server) haConfig() homeassistant.Config {
	return homeassistant.Config{Prefix: s.cfg.HomeAssistant, Log: s.log.With("component", "homeassistant")}
}

// inlineBroker publishes through mochi's inline client: retained, its
// messages are stored like a client's.
type inlineBroker struct{ s *Server }

func (b inlineBroker) Publish(topic string, payload []byte, retain bool) error {
	return b.s.mqtt.Publish(topic, payload, retain, 1)
}

func (b inlineBroker) Retained(filter string) []string {
	var topics []string
	for _, pk := range b.s.mqtt.Topics.Messages(filter) {
		topics = append(topics, pk.TopicName)
	}
	return topics
}
