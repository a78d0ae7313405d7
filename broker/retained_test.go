package broker_test

import (
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/internal/mqtttest"
)

// retainEnters has n devices named prefix-NNN ping inside
// zone-museumsinsel and waits until their ENTERs are retained; it returns
// how many retained messages there were before (mochi's $SYS topics).
func retainEnters(t *testing.T, srv *broker.Server, prefix string, n int) float64 {
	t.Helper()
	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	base := metric(t, srv, `edgefence_mqtt_retained_messages`)
	t0 := nowMs() - 10_000
	for i := range n {
		tracker.ping(fmt.Sprintf("%s-%03d", prefix, i), museumLat, museumLon, t0)
	}
	for deadline := time.Now().Add(wait); metric(t, srv, `edgefence_mqtt_retained_messages`) < base+float64(n); {
		if time.Now().After(deadline) {
			t.Fatalf("%v transitions retained after %v, want %d", metric(t, srv, `edgefence_mqtt_retained_messages`)-base, wait, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return base
}

// A dashboard that subscribes to geofence/# on a busy broker learns every
// device's state, however many there are: not the first --client-queue of
// them (mochi's own retained delivery queues them all on the client's
// outbound queue and drops the rest), and at QoS 1 not only the first
// --max-inflight (delivery waits for acknowledgements instead). The
// options of MQTT 5 subscriptions hold: retain handling, subscription
// identifiers, no retained messages for a shared subscription.
func TestNewDashboardGetsEveryRetainedTransition(t *testing.T) {
	const devices = 300
	cfg := testConfig(t)
	cfg.ClientQueue = 16
	cfg.MaxInflight = 20
	cfg.PublishRate = 0
	srv := start(t, cfg)
	base := retainEnters(t, srv, "van", devices)

	// got collects n transitions from cl, each a retained ENTER of a
	// different device, failing on anything else.
	got := func(cl *client5, n int, subID int) {
		t.Helper()
		seen := map[string]bool{}
		for len(seen) < n {
			m := cl.Next(fmt.Sprintf("%d retained ENTERs (have %d)", n, len(seen)))
			if m.Topic == cl.Barrier {
				continue
			}
			tr := decodeTransition(t, "geofence", m)
			if tr.Type != "ENTER" || !m.Retain || seen[tr.Device] {
				t.Fatalf("got %s retain=%v (seen before: %v), want each device's retained ENTER once", tr, m.Retain, seen[tr.Device])
			}
			if id := m.Properties.SubscriptionIdentifier; subID != 0 && (id == nil || *id != subID) {
				t.Fatalf("%s: subscription identifier %v, want %d", tr, id, subID)
			}
			seen[tr.Device] = true
		}
	}

	// QoS 0: all of them, and nothing more (the barrier). The barrier is
	// published only once they are in: sent while the last of them still
	// fill the 16-message queue it would be dropped, as any live message
	// to a full queue is.
	q0 := connect5(t, srv.MQTTAddr(), "dashboard-qos0")
	subscribeWith(t, q0, paho.SubscribeOptions{Topic: "geofence/#", QoS: 0}, 0)
	for seen := map[string]bool{}; len(seen) < devices; {
		m := q0.Next(fmt.Sprintf("%d retained ENTERs at QoS 0 (have %d)", devices, len(seen)))
		if !m.Retain || m.QoS != 0 || seen[m.Topic] {
			t.Fatalf("QoS 0 dashboard: got %s retain=%v qos=%d (seen before: %v), want each device's retained ENTER once", m.Topic, m.Retain, m.QoS, seen[m.Topic])
		}
		seen[m.Topic] = true
	}
	if extra := q0.Sync(); len(extra) != 0 {
		t.Errorf("QoS 0 dashboard: %d messages after the %d retained ones, want none", len(extra), devices)
	}

	// QoS 1, with a subscription identifier: more than --max-inflight
	// unacknowledged, so the broker waits for the client's PUBACKs.
	q1 := connect5(t, srv.MQTTAddr(), "dashboard-qos1")
	subscribeWith(t, q1, paho.SubscribeOptions{Topic: "geofence/+/+", QoS: 1}, 7)
	got(q1, devices, 7)

	// Retain handling 1 sends them for a new subscription only; 2 never.
	rh := connect5(t, srv.MQTTAddr(), "dashboard-rh")
	subscribeWith(t, rh, paho.SubscribeOptions{Topic: "geofence/zone-museumsinsel/#", QoS: 1, RetainHandling: 1}, 0)
	got(rh, devices, 0)
	subscribeWith(t, rh, paho.SubscribeOptions{Topic: "geofence/zone-museumsinsel/#", QoS: 1, RetainHandling: 1}, 0)
	subscribeWith(t, rh, paho.SubscribeOptions{Topic: "geofence/#", QoS: 1, RetainHandling: 2}, 0)
	subscribeWith(t, rh, paho.SubscribeOptions{Topic: "$share/dash/geofence/#", QoS: 1}, 0)
	if extra := rh.Sync(); len(extra) != 0 {
		t.Errorf("retain handling 1 again, 2 and a shared subscription got %d messages (first %s), want none", len(extra), extra[0].Topic)
	}

	if n := metric(t, srv, `edgefence_shed_total{stage="subscriber"}`); n != 0 {
		t.Errorf("%v messages dropped for subscribers, want none", n)
	}
	if n := metric(t, srv, `edgefence_mqtt_retained_messages`); n != base+devices {
		t.Errorf("edgefence_mqtt_retained_messages = %v, want %v", n, base+devices)
	}
}

// An EXIT is retained with a message expiry; once it has expired a new
// subscriber is not sent it, without a restart.
func TestExpiredExitIsNotSentToNewSubscribers(t *testing.T) {
	cfg := testConfig(t)
	cfg.ExitExpiry = time.Second
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	t0 := nowMs() - 10_000
	tracker.ping("cab-2", museumLat, museumLon, t0)
	expectTransitions(t, dash, "ENTER zone-museumsinsel cab-2")
	tracker.ping("cab-1", museumLat, museumLon, t0)
	tracker.ping("cab-1", outLat, outLon, t0+1000)
	expectTransitions(t, dash, "ENTER zone-museumsinsel cab-1", "EXIT zone-museumsinsel cab-1")
	decided := time.Now()

	before := connect5(t, srv.MQTTAddr(), "before")
	before.Subscribe("geofence/#")
	if got := before.Sync(); len(got) != 2 {
		t.Fatalf("before the EXIT expired: %d retained messages, want cab-1's EXIT and cab-2's ENTER", len(got))
	}

	// Expiry is counted in whole seconds: a 1 s one has passed 2 s on.
	time.Sleep(time.Until(decided.Add(2100 * time.Millisecond)))
	after := connect5(t, srv.MQTTAddr(), "after")
	after.Subscribe("geofence/#")
	got := after.Sync()
	if len(got) != 1 {
		t.Fatalf("after the EXIT expired: %d retained messages, want cab-2's ENTER only", len(got))
	}
	if tr := decodeTransition(t, "geofence", got[0]); tr.short() != "ENTER zone-museumsinsel cab-2" {
		t.Errorf("after the EXIT expired: got %s, want cab-2's ENTER", tr)
	}
}

// A dashboard that subscribes again while the retained transitions of its
// last SUBSCRIBE still wait for its acknowledgements gets each
// subscription's in turn — all of the first, then all of the second —
// with no more than --max-inflight unacknowledged at any moment.
func TestRetainedDeliveriesWaitingForAcksGoInTurn(t *testing.T) {
	const devices, inflight = 60, 20
	cfg := testConfig(t)
	cfg.MaxInflight = inflight
	cfg.PublishRate = 0
	srv := start(t, cfg)
	retainEnters(t, srv, "bus", devices)

	r := rawDial(t, srv.MQTTAddr())
	r.mustConnect(t, mqtttest.ID("dashboard"), creds{})
	filters := []string{"geofence/#", "geofence/+/+", "geofence/zone-museumsinsel/#"}
	for i, f := range filters {
		err := r.send(packets.Packet{
			FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1},
			PacketID:    uint16(1000 + i), // mochi refuses an id its own messages use (0x91)
			Filters:     packets.Subscriptions{{Filter: f, Qos: 1}},
			Properties:  packets.Properties{SubscriptionIdentifier: []int{i + 1}},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// next returns the next PUBLISH (SUBACKs are skipped), or nil when
	// none comes within d.
	next := func(d time.Duration) *packets.Packet {
		t.Helper()
		for {
			_ = r.conn.SetReadDeadline(time.Now().Add(d))
			pk, err := r.readNoDeadline()
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil
			}
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if pk.FixedHeader.Type == packets.Publish {
				return &pk
			}
		}
	}
	var got []int // each message's subscription identifier, in order
	var unacked []uint16
	for pk := next(500 * time.Millisecond); pk != nil; pk = next(500 * time.Millisecond) {
		got = append(got, pk.Properties.SubscriptionIdentifier...)
		unacked = append(unacked, pk.PacketID)
	}
	if len(got) != inflight {
		t.Fatalf("%d retained messages before any acknowledgement, want --max-inflight %d", len(got), inflight)
	}
	ack := func(id uint16) {
		if err := r.send(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: id}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range unacked {
		ack(id)
	}
	for len(got) < devices*len(filters) {
		pk := next(wait)
		if pk == nil {
			t.Fatalf("got %d retained messages, want %d", len(got), devices*len(filters))
		}
		if !pk.FixedHeader.Retain {
			t.Fatalf("message %d not flagged retained", len(got))
		}
		got = append(got, pk.Properties.SubscriptionIdentifier...)
		ack(pk.PacketID)
	}
	for i, id := range got {
		if want := i/devices + 1; id != want {
			t.Fatalf("message %d is for subscription %d, want %d: each SUBSCRIBE's in turn", i, id, want)
		}
	}
}
