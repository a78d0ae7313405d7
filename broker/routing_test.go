package broker_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// Pings are routed to ordinary subscribers as any broker would, however
// and whenever they subscribe: the broker skips routing work only while
// no subscription can receive telemetry.
func TestTelemetryReachesSubscribersWhoeverSubscribes(t *testing.T) {
	srv := start(t, testConfig(t))
	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.subscribe("geofence/#") // transitions only: telemetry is not routed to it
	t0 := nowMs() - 60_000
	tracker.ping("rt-1", museumLat, museumLon, t0)

	raw := connect5(t, srv.MQTTAddr(), "raw")
	raw.subscribe("devices/+/telemetry")
	tracker.ping("rt-1", museumLat, museumLon, t0+1000)
	if m := raw.next("the ping after subscribing"); m.Topic != "devices/rt-1/telemetry" {
		t.Fatalf("got %s, want devices/rt-1/telemetry", m.Topic)
	}

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := raw.c.Unsubscribe(ctx, &paho.Unsubscribe{Topics: []string{"devices/+/telemetry"}}); err != nil {
		t.Fatal(err)
	}
	shared := connect5(t, srv.MQTTAddr(), "shared")
	shared.subscribe("$share/workers/devices/#")
	tracker.ping("rt-1", museumLat, museumLon, t0+2000)
	if m := shared.next("the ping on a shared subscription"); m.Topic != "devices/rt-1/telemetry" {
		t.Fatalf("got %s, want devices/rt-1/telemetry", m.Topic)
	}
	if got := raw.sync(); len(got) != 0 {
		t.Fatalf("unsubscribed client got %d messages", len(got))
	}
	for _, m := range dash.sync() {
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
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := sub.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "devices/+/telemetry", QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	_ = sub.Disconnect(&paho.Disconnect{})

	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	tracker.ping("away-1", museumLat, museumLon, nowMs()-5000)
	got := make(chan *paho.Publish, 16)
	back := connectSession(t, srv.MQTTAddr(), "collector", func(p *paho.Publish) { got <- p })
	defer back.Disconnect(&paho.Disconnect{})
	select {
	case m := <-got:
		if m.Topic != "devices/away-1/telemetry" {
			t.Fatalf("got %s, want devices/away-1/telemetry", m.Topic)
		}
	case <-time.After(wait):
		t.Fatal("the session did not get the ping published while its client was away")
	}
}

// connectSession connects with a persistent session (clean start off, an
// hour of session expiry) under a fixed client id.
func connectSession(t *testing.T, addr, id string, onPublish ...func(*paho.Publish)) *paho.Client {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatal(err)
	}
	c := paho.NewClient(paho.ClientConfig{
		Conn:          conn,
		PacketTimeout: wait,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			for _, f := range onPublish {
				f(pr.Packet)
			}
			return true, nil
		}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	expiry := uint32(3600)
	if _, err := c.Connect(ctx, &paho.Connect{ClientID: id, KeepAlive: 30, Properties: &paho.ConnectProperties{SessionExpiryInterval: &expiry}}); err != nil {
		conn.Close()
		t.Fatal(err)
	}
	return c
}
