package worker

import "testing"

func TestSubjectsAndTopics(t *testing.T) {
	for _, c := range []struct {
		subject, topic string
		tick           bool
	}{
		{"edgefence.p.3.devices.truck-42.telemetry", "devices/truck-42/telemetry", false},
		{"edgefence.p.0.owntracks.alice.phone", "owntracks/alice/phone", false},
		{"edgefence.p.12.devices.v1//2.telemetry", "devices/v1.2/telemetry", false},
		{"edgefence.p.7._tick", "", true},
	} {
		topic, tick := splitPing(c.subject)
		if topic != c.topic || tick != c.tick {
			t.Errorf("splitPing(%q) = %q, %v; want %q, %v", c.subject, topic, tick, c.topic, c.tick)
		}
		if !tick && topicToSubject(topic) != c.subject[len("edgefence.p.")+len(c.subject[len("edgefence.p."):])-len(topicToSubject(topic)):] {
			t.Errorf("topicToSubject(%q) = %q", topic, topicToSubject(topic))
		}
	}
}
