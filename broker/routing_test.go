package broker_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/edgefence/edgefence/internal/mqtttest"
)

// Pings are routed to ordinary subscribers as any broker would, however
// and whenever they subscribe: the broker skips routing work only while
// no subscription can receive telemetry.
func TestTelemetryReachesSubscribersWhoeverSubscribes(t *testing.T) {
	srv := start(t, testConfig(t))
	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#") // transitions only: telemetry is not routed to it
	t0 := nowMs() - 60_000
	tracker.ping("rt-1", museumLat, museumLon, t0)

	raw := connect5(t, srv.MQTTAddr(), "raw")
	raw.Subscribe("devices/+/telemetry")
	tracker.ping("rt-1", museumLat, museumLon, t0+1000)
	if m := raw.Next("the ping after subscribing"); m.Topic != "devices/rt-1/telemetry" {
		t.Fatalf("got %s, want devices/rt-1/telemetry", m.Topic)
	}

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := raw.Paho.Unsubscribe(ctx, &paho.Unsubscribe{Topics: []string{"devices/+/telemetry"}}); err != nil {
		t.Fatal(err)
	}
	shared := connect5(t, srv.MQTTAddr(), "shared")
	shared.Subscribe("$share/workers/devices/#")
	tracker.ping("rt-1", museumLat, museumLon, t0+2000)
	if m := shared.Next("the ping on a shared subscription"); m.Topic != "devices/rt-1/telemetry" {
		t.Fatalf("got %s, want devices/rt-1/telemetry", m.Topic)
	}
	if got := raw.Sync(); len(got) != 0 {
		t.Fatalf("unsubscribed client got %d messages", len(got))
	}
	for _, m := range dash.Sync() {
		if m.Topic == "devices/rt-1/telemetry" {
			t.Fatalf("a geofence/# subscriber got telemetry")
		}
	}
}

// A persistent session's subscription outlives its connection: pings
// published while its client is away are queued for it, so they are still
// routed with no subscriber connected.
func TestAwaySessionStillGetsTelemetry(t *testing.T) {
	srv := start(t, testConfig(t))
	sub := connectSession(t, srv.MQTTAddr(), "collector")
	sub.Subscribe("devices/+/telemetry")
	_ = sub.Paho.Disconnect(&paho.Disconnect{})
	// Publish only once the broker has seen it go: before that, the ping
	// would reach the old connection instead of waiting in the session.
	deadline := time.Now().Add(wait)
	for metric(t, srv, "edgefence_mqtt_clients_connected") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the broker still counts the disconnected client")
		}
		time.Sleep(5 * time.Millisecond)
	}

	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	tracker.ping("away-1", museumLat, museumLon, nowMs()-5000)
	back := connectSession(t, srv.MQTTAddr(), "collector")
	if m := back.Next("the ping published while the client was away"); m.Topic != "devices/away-1/telemetry" {
		t.Fatalf("got %s, want devices/away-1/telemetry", m.Topic)
	}
}

// connectSession connects with a persistent session (clean start off, an
// hour of session expiry) under a fixed client id.
func connectSession(t *testing.T, addr, id string) *mqtttest.Client {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatal(err)
	}
	expiry := uint32(3600)
	cl, _, err := mqtttest.Dial(t, conn, &paho.Connect{ClientID: id, KeepAlive: 30, Properties: &paho.ConnectProperties{SessionExpiryInterval: &expiry}}, wait)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}
