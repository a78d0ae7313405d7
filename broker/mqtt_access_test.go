package broker_test

// MQTT access hardening of issue 31: the Home Assistant topics are the
// server's, client ids are not squatted, refused publishes do not flood
// the log, and a login flood does not turn away legitimate logins.

import (
	"context"
	"testing"

	"github.com/eclipse/paho.golang/paho"
)

// With Home Assistant discovery on at its defaults, the topics the server
// announces and updates its entities on are its own: no client, admin
// included, publishes there, and a dashboard reads them. The protection
// was computed before the defaults were filled in, and reserved "/#"
// instead (topics starting with "/"), which stays anybody's.
func TestHomeAssistantTopicsFromEffectiveConfig(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	cfg.HomeAssistant = "homeassistant"
	srv := start(t, cfg)
	admin := mustDial5(t, srv.MQTTAddr(), "ha-admin", login("ops"))
	for _, topic := range []string{
		"homeassistant/device_tracker/edgefence/truck-1/config",
		"homeassistant/sensor/edgefence/zone-museumsinsel/config",
		"edgefence/ha/status",
		"edgefence/ha/truck-1/state",
	} {
		if rc := admin.Publish(topic, 1, []byte("forged")); rc != denied {
			t.Errorf("admin publishes on the server's %s: PUBACK %#x, want %#x", topic, rc, denied)
		}
	}
	for _, topic := range []string{"/x", "/", "foo/bar", "homeassistant/device_tracker/other-node/x/config"} {
		if rc := admin.Publish(topic, 1, []byte("fine")); rc != 0 {
			t.Errorf("admin publishes on %s, not the server's: PUBACK %#x, want 0", topic, rc)
		}
	}
	wall := mustDial5(t, srv.MQTTAddr(), "ha-wall", login("wall"))
	// One SUBSCRIBE: the retained messages of a first would be in flight,
	// and mochi refuses a later SUBSCRIBE reusing one of their packet ids
	// (0x91).
	filters := map[string]byte{
		"homeassistant/device_tracker/edgefence/#": granted,
		"homeassistant/sensor/edgefence/+/config":  granted,
		"edgefence/ha/#": granted,
		"/#":             denied, // not the server's
	}
	sub := &paho.Subscribe{}
	for f := range filters {
		sub.Subscriptions = append(sub.Subscriptions, paho.SubscribeOptions{Topic: f, QoS: 1})
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	sa, err := wall.Paho.Subscribe(ctx, sub)
	if sa == nil || len(sa.Reasons) != len(sub.Subscriptions) { // err: one was refused
		t.Fatalf("dashboard subscribes: %v (%+v)", err, sa)
	}
	for i, s := range sub.Subscriptions {
		if rc := sa.Reasons[i]; rc != filters[s.Topic] {
			t.Errorf("dashboard subscribes %s: SUBACK %#x, want %#x", s.Topic, rc, filters[s.Topic])
		}
	}
	// What the dashboard subscribed to comes, the server's availability
	// among the retained entities.
	for {
		m := wall.Next("the retained availability on edgefence/ha/status")
		if m.Topic == "edgefence/ha/status" {
			if string(m.Payload) != "online" {
				t.Errorf("dashboard got availability %q, want online", m.Payload)
			}
			break
		}
	}
}
