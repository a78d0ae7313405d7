package subjects

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
		topic, tick := SplitPing(c.subject)
		if topic != c.topic || tick != c.tick {
			t.Errorf("SplitPing(%q) = %q, %v; want %q, %v", c.subject, topic, tick, c.topic, c.tick)
		}
		if !tick && topicToSubject(topic) != c.subject[len("edgefence.p.")+len(c.subject[len("edgefence.p."):])-len(topicToSubject(topic)):] {
			t.Errorf("topicToSubject(%q) = %q", topic, topicToSubject(topic))
		}
	}
}

// TestKeysRoundTrip: the collector and the lease loop read back the
// partition of a checkpoint object and the worker of a presence key,
// and nothing else passes for one.
func TestKeysRoundTrip(t *testing.T) {
	for _, n := range []int{0, 7, 1023} {
		if got, ok := CheckpointPartition(CheckpointName(n)); !ok || got != n {
			t.Errorf("CheckpointPartition(%q) = %d, %v", CheckpointName(n), got, ok)
		}
	}
	for _, name := range []string{"fences-current", "fences-abc", "p-", "p-x", "p.3"} {
		if _, ok := CheckpointPartition(name); ok {
			t.Errorf("CheckpointPartition(%q) accepted", name)
		}
	}
	if got, ok := PresenceName(PresenceKey("box-1")); !ok || got != "box-1" {
		t.Errorf("PresenceName = %q, %v", got, ok)
	}
	if _, ok := PresenceName(LeaseKey(3)); ok {
		t.Error("a lease key passed for a presence key")
	}
}
