package broker_test

// The MQTT listener's tracker path (Config.LightTrackers, on by default):
// a client is served as on the tracker listener until it needs mochi, and
// then mochi serves it as if it had from the start.

import (
	"context"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/internal/mqtttest"
)

// subscribe sends SUBSCRIBE (QoS 1 filters) and returns the SUBACK.
func (tc *trackerConn) subscribe(id uint16, filters ...string) packets.Packet {
	tc.t.Helper()
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}, PacketID: id}
	for _, f := range filters {
		pk.Filters = append(pk.Filters, packets.Subscription{Filter: f, Qos: 1})
	}
	if err := tc.send(pk); err != nil {
		tc.t.Fatalf("SUBSCRIBE %v: %v", filters, err)
	}
	ack := tc.expect(packets.Suback, "SUBACK")
	if ack.PacketID != id || len(ack.ReasonCodes) != len(filters) || ack.ReasonCodes[0] >= 0x80 {
		tc.t.Fatalf("SUBACK id %d codes % x, want id %d and %d granted", ack.PacketID, ack.ReasonCodes, id, len(filters))
	}
	return ack
}

// nextPublish reads packets until a PUBLISH, acknowledging it at QoS 1;
// it fails on anything but PUBLISH and PUBACK.
func (tc *trackerConn) nextPublish(what string) packets.Packet {
	tc.t.Helper()
	for {
		pk, err := tc.next()
		if err != nil {
			tc.t.Fatalf("%s: %v", what, err)
		}
		switch pk.FixedHeader.Type {
		case packets.Puback:
			continue
		case packets.Publish:
			if pk.FixedHeader.Qos == 1 {
				_ = tc.send(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: pk.PacketID})
			}
			return pk
		}
		tc.t.Fatalf("%s: got packet type %d", what, pk.FixedHeader.Type)
	}
}

// A tracker on the MQTT port that subscribes is handed to mochi at its
// SUBSCRIBE: it gets its SUBACK (not a second CONNACK), the transition of
// its earlier ping, and live ones from then on; its earlier pings were
// evaluated and acknowledged on the tracker path.
func TestLightTrackerSubscribesAndMochiServesIt(t *testing.T) {
	for i, ver := range versions {
		t.Run(ver.name, func(t *testing.T) {
			srv := start(t, testConfig(t))
			dev := mqtttest.ID("sub-" + ver.name)
			tk := dialRaw(t, srv.MQTTAddr(), ver.v)
			tk.mustConnect(dev, anonymous)
			waitMetric(t, srv, `edgefence_tracker_connections`, 1)
			t0 := nowMs() - 30_000
			if rc := tk.pub1("devices/"+dev+"/telemetry", 1, canonical(museumLat, museumLon, t0)); rc != 0 {
				t.Fatalf("ping on the tracker path: PUBACK %#x", rc)
			}
			if metric(t, srv, "edgefence_pings_direct_total") != 1 {
				t.Error("the ping was not read off the connection by the tracker path")
			}
			waitMetric(t, srv, `edgefence_transitions_total{type="ENTER"}`, 1)
			tk.subscribe(uint16(7+i), "geofence/+/"+dev)
			waitMetric(t, srv, `edgefence_tracker_promoted_total`, 1)
			waitMetric(t, srv, `edgefence_tracker_connections`, 0)
			// Retained, or live if the publisher had not put it in the
			// retained set yet when the SUBSCRIBE came: the ENTER either way.
			if enter := tk.nextPublish("the ENTER"); enter.TopicName != "geofence/zone-museumsinsel/"+dev {
				t.Errorf("first message %s, want the ENTER", enter.TopicName)
			}
			if err := tk.publish(1, 2, "devices/"+dev+"/telemetry", canonical(outLat, outLon, t0+1000)); err != nil {
				t.Fatal(err)
			}
			if exit := tk.nextPublish("the live EXIT"); exit.TopicName != "geofence/zone-museumsinsel/"+dev || exit.FixedHeader.Retain {
				t.Errorf("then %s retain=%v, want the live EXIT", exit.TopicName, exit.FixedHeader.Retain)
			}
		})
	}
}

// Handed to mochi, an MQTT 5 client keeps the client id the tracker path
// assigned it and the topic aliases it set there.
func TestLightTrackerKeepsItsIDAndAliasesWhenHandedOver(t *testing.T) {
	srv := start(t, testConfig(t))
	dash := connect5(t, srv.MQTTAddr(), "dash")
	dash.Subscribe("geofence/#")
	tk := dialRaw(t, srv.MQTTAddr(), 5)
	ack := tk.connect("", anonymous, 30)
	id := ack.Properties.AssignedClientID
	if ack.ReasonCode != 0 || id == "" {
		t.Fatalf("CONNACK %#x assigned id %q, want 0 and an id", ack.ReasonCode, id)
	}
	t0 := nowMs() - 30_000
	alias := func(a uint16) func(*packets.Packet) {
		return func(pk *packets.Packet) { pk.Properties.TopicAlias, pk.Properties.TopicAliasFlag = a, true }
	}
	if rc := tk.pub1("devices/aliased/telemetry", 1, canonical(museumLat, museumLon, t0), alias(3)); rc != 0 {
		t.Fatalf("setting alias 3: PUBACK %#x", rc)
	}
	expectTransitions(t, dash, "ENTER zone-museumsinsel aliased")
	promoted := metric(t, srv, "edgefence_tracker_promoted_total") // the dashboard's
	tk.subscribe(9, "edgefence-test/nothing")
	waitMetric(t, srv, `edgefence_tracker_promoted_total`, promoted+1)
	if rc := tk.pub1("", 2, canonical(outLat, outLon, t0+1000), alias(3)); rc >= 0x80 {
		t.Fatalf("publish by alias 3 after the hand-over: PUBACK %#x, want success", rc)
	}
	expectTransitions(t, dash, "EXIT zone-museumsinsel aliased")

	// mochi knows it by the assigned id: a client connecting with that id
	// takes it over.
	if _, ca, err := mqtttest.Dial(t, dialTCP(t, srv.MQTTAddr()), &paho.Connect{ClientID: id, KeepAlive: 30, CleanStart: true}, wait); err != nil {
		t.Fatalf("connect as %s: %v (%+v)", id, err, ca)
	}
	tk.closedWith("the handed-over client, taken over by its assigned id", 0x8E)
}

// A will travels with the client to mochi, and is published once.
func TestLightTrackerWillIsPublishedOnceAfterHandover(t *testing.T) {
	srv := start(t, testConfig(t))
	watcher := connect5(t, srv.MQTTAddr(), "watcher")
	watcher.Subscribe("devices/+/status")
	tk := dialRaw(t, srv.MQTTAddr(), 4)
	if ack := tk.connect(mqtttest.ID("will"), anonymous, 30, withWill("devices/w/status", []byte("gone"), false)); ack.ReasonCode != 0 {
		t.Fatalf("connect with a will: CONNACK %#x", ack.ReasonCode)
	}
	promoted := metric(t, srv, "edgefence_tracker_promoted_total") // the watcher's
	tk.subscribe(3, "edgefence-test/nothing")
	waitMetric(t, srv, `edgefence_tracker_promoted_total`, promoted+1)
	tk.conn.Close()
	if m := watcher.Next("the will"); m.Topic != "devices/w/status" || string(m.Payload) != "gone" {
		t.Fatalf("got %s %q, want the will", m.Topic, m.Payload)
	}
	if more := watcher.Sync(); len(more) != 0 {
		t.Errorf("after the will, %d more messages (first %s %q): the will was published twice", len(more), more[0].Topic, more[0].Payload)
	}
}

// A client whose session mochi keeps is mochi's from its CONNECT: a 3.1.1
// client without clean session that subscribed gets its session back.
func TestLightTrackerWithAStoredSessionGoesToMochi(t *testing.T) {
	srv := start(t, testConfig(t))
	id := mqtttest.ID("persistent")
	notClean := func(pk *packets.Packet) { pk.Connect.Clean = false }
	tk := dialRaw(t, srv.MQTTAddr(), 4)
	if ack := tk.connect(id, anonymous, 30, notClean); ack.ReasonCode != 0 || ack.SessionPresent {
		t.Fatalf("first connect: CONNACK %#x session present %v, want 0, false", ack.ReasonCode, ack.SessionPresent)
	}
	tk.subscribe(4, "geofence/#")
	if err := tk.send(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Disconnect}}); err != nil {
		t.Fatal(err)
	}
	tk.closed("after DISCONNECT")
	again := dialRaw(t, srv.MQTTAddr(), 4)
	if ack := again.connect(id, anonymous, 30, notClean); ack.ReasonCode != 0 || !ack.SessionPresent {
		t.Fatalf("reconnect: CONNACK %#x session present %v, want 0, true", ack.ReasonCode, ack.SessionPresent)
	}
	waitMetric(t, srv, `edgefence_tracker_promoted_total`, 2)
}

// Stopping the broker while mochi takes a client over from the tracker
// path — here checking its password, which takes a while the first time —
// neither waits for that client nor leaves its goroutines (goleak): the
// client would join mochi's clients only after the broker disconnected
// them, and mochi's close would wait for it.
func TestCloseWhileMochiTakesAClientOver(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, testUser{name: "late", role: "device"})
	cfg.CloseTimeout = 3 * time.Second
	srv := start(t, cfg)
	tk := dialRaw(t, srv.MQTTAddr(), 5)
	pk := connectPacket(mqtttest.ID("late"), login("late"), 30)
	// A will delay is mochi's to keep: handed over at CONNECT, before
	// anyone checked the password.
	withWill("devices/late/status", []byte("gone"), false)(&pk)
	pk.Connect.WillProperties.WillDelayInterval = 60
	if err := tk.send(pk); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, srv, `edgefence_tracker_promoted_total`, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		t.Fatalf("Close while a client was being handed to mochi: %v", err)
	}
}
