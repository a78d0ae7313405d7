package broker_test

import (
	"strings"
	"testing"

	"github.com/eclipse/paho.golang/paho"
)

// Live transitions reach every subscriber once, as MQTT 5 says: with the
// identifier of the subscription that matched, without one when it had
// none, once for a client with two matching filters, to one member of a
// shared group, and only where a filter matches. The broker reuses what
// it gathers for each message (mochi's publish path, patched), so no
// message may carry anything of the one before.
func TestLiveTransitionsReachEachSubscriptionOnce(t *testing.T) {
	srv := start(t, testConfig(t))
	tracker := connect5(t, srv.MQTTAddr(), "tracker")

	withID := connect5(t, srv.MQTTAddr(), "with-id")
	subscribeWith(t, withID, paho.SubscribeOptions{Topic: "geofence/#", QoS: 1, RetainAsPublished: true}, 5)
	plain := connect5(t, srv.MQTTAddr(), "plain")
	plain.Subscribe("geofence/#")
	overlap := connect5(t, srv.MQTTAddr(), "overlap")
	subscribeWith(t, overlap, paho.SubscribeOptions{Topic: "geofence/#", QoS: 1, RetainAsPublished: true}, 7)
	overlap.Subscribe("geofence/+/sid-1")
	shared := []*client5{connect5(t, srv.MQTTAddr(), "ops-1"), connect5(t, srv.MQTTAddr(), "ops-2")}
	for _, cl := range shared {
		cl.Subscribe("$share/ops/geofence/#")
	}

	narrow := connect5(t, srv.MQTTAddr(), "narrow")
	narrow.Subscribe("geofence/+/sid-1")

	t0 := nowMs() - 60_000
	tracker.ping("sid-1", museumLat, museumLon, t0)
	tracker.ping("sid-1", outLat, outLon, t0+1000)
	tracker.ping("sid-2", museumLat, museumLon, t0)
	all := []string{"ENTER zone-museumsinsel sid-1", "EXIT zone-museumsinsel sid-1", "ENTER zone-museumsinsel sid-2"}

	for _, c := range []struct {
		name string
		cl   *client5
		id   int      // 0: none
		want []string // in any order across devices
	}{
		{"with-id", withID, 5, all},
		{"plain", plain, 0, all},
		{"overlap", overlap, 7, all},
		{"narrow", narrow, 0, all[:2]},
	} {
		got := map[string]bool{}
		for range c.want {
			m := c.cl.Next("a transition")
			tr := decodeTransition(t, "geofence", m)
			if got[tr.short()] {
				t.Errorf("%s got %s twice", c.name, tr)
			}
			got[tr.short()] = true
			var id *int
			if m.Properties != nil {
				id = m.Properties.SubscriptionIdentifier
			}
			switch {
			case c.id == 0 && id != nil:
				t.Errorf("%s: %s carries subscription identifier %d, subscribed without one", c.name, tr, *id)
			case c.id != 0 && (id == nil || *id != c.id):
				t.Errorf("%s: %s carries subscription identifier %v, want %d", c.name, tr, id, c.id)
			}
		}
		for _, w := range c.want {
			if !got[w] {
				t.Errorf("%s did not get %s (got %v)", c.name, w, got)
			}
		}
		if extra := transitionsIn(c.cl.Sync()); len(extra) != 0 {
			t.Errorf("%s got %d more transitions (first on %s), want each once", c.name, len(extra), extra[0].Topic)
		}
	}

	var group []*paho.Publish
	for _, cl := range shared {
		group = append(group, transitionsIn(cl.Sync())...)
	}
	if len(group) != len(all) {
		t.Fatalf("the shared group got %d transitions, want %d: one member each", len(group), len(all))
	}
}

// transitionsIn keeps the messages on the transition topics.
func transitionsIn(ms []*paho.Publish) []*paho.Publish {
	var out []*paho.Publish
	for _, m := range ms {
		if strings.HasPrefix(m.Topic, "geofence/") {
			out = append(out, m)
		}
	}
	return out
}
