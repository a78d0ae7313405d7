package broker_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/edgefence/edgefence/internal/syncbuf"
)

// A subscriber that stops acknowledging loses messages once it has
// --max-inflight of them unacknowledged (mochi drops them): never
// silently — each is counted, and the log says so once a second.
func TestSubscriberAtMaxInflightLosesMessagesCountedAndLogged(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxInflight = 3
	var logs syncbuf.Buffer
	cfg.Log = slog.New(slog.NewTextHandler(&logs, nil))
	srv := start(t, cfg)

	conn, err := net.DialTimeout("tcp", srv.MQTTAddr(), wait)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := 0
	stuck := paho.NewClient(paho.ClientConfig{
		Conn:                       conn,
		PacketTimeout:              wait,
		EnableManualAcknowledgment: true, // and it never acknowledges
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(paho.PublishReceived) (bool, error) {
			mu.Lock()
			got++
			mu.Unlock()
			return true, nil
		}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := stuck.Connect(ctx, &paho.Connect{ClientID: "stuck-dashboard", KeepAlive: 30, CleanStart: true}); err != nil {
		t.Fatal(err)
	}
	defer stuck.Disconnect(&paho.Disconnect{})
	if _, err := stuck.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "devices/#", QoS: 1}}}); err != nil {
		t.Fatal(err)
	}

	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	const n = 10
	t0 := nowMs() - 60_000
	for i := range n {
		tracker.ping(fmt.Sprintf("if-%d", i), museumLat, museumLon, t0)
	}
	tracker.flush()
	deadline := time.Now().Add(wait)
	for metric(t, srv, `edgefence_shed_total{stage="subscriber_inflight"}`) != n-3 {
		if time.Now().After(deadline) {
			t.Fatalf(`edgefence_shed_total{stage="subscriber_inflight"} = %v, want %d`, metric(t, srv, `edgefence_shed_total{stage="subscriber_inflight"}`), n-3)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The broker has now decided every message: 3 were written to the
	// socket, the rest shed. The client may still be reading the 3.
	count := func() int { mu.Lock(); defer mu.Unlock(); return got }
	for count() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := count(); got != 3 {
		t.Errorf("the stuck subscriber got %d messages, want 3 (--max-inflight)", got)
	}
	if l := logs.String(); (strings.Count(l, "subscriber too slow") < 1 || strings.Count(l, "subscriber too slow") > 2) || strings.Contains(l, "client store quota reached") {
		t.Errorf("want one rate-limited log line per second naming the problem, got:\n%s", l)
	}
}
