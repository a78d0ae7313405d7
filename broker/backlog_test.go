package broker_test

import (
	"context"
	"encoding/json"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/edgefence/edgefence/loadgen"
)

// A backlog of transitions much bigger than a dashboard's queue
// (--client-queue) all reach the dashboard when the broker has one core:
// the publisher lets the dashboard's writer drain its queue between
// batches instead of overflowing it (a dashboard that loses transitions is
// the failure the product exists to prevent). The backlog: 3,000 devices
// entering a fence in one burst, released together at the end of the hold.
func TestDashboardGetsABacklogBiggerThanItsQueue(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	cfg := testConfig(t)
	cfg.PublishRate = 0 // the burst is above the default per-client rate
	cfg.ClientQueue = 64
	cfg.DataDir = "" // no store commit between the batches
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dash")
	// At QoS 0 each message costs the broker least: the most messages in
	// the publisher's time slice, the hardest case for the queue.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := dash.Paho.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "geofence/#", QoS: 0}}}); err != nil {
		t.Fatal(err)
	}

	c, err := net.Dial("tcp", srv.MQTTAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	connect, err := loadgen.AppendConnect(nil, "backlog", 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(connect); err != nil {
		t.Fatal(err)
	}
	if code, err := loadgen.NewReader(c, 4096, 1<<16).ReadConnack(); err != nil || code != 0 {
		t.Fatalf("CONNACK %d, %v", code, err)
	}
	const devices = 1000
	t0 := nowMs()
	var burst []byte
	for i := range devices {
		if burst, err = loadgen.AppendPublish(burst, "devices/bl-"+strconv.Itoa(i)+"/telemetry", 0, 0, canonical(museumLat, museumLon, t0)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Write(burst); err != nil {
		t.Fatal(err)
	}

	seen := map[string]bool{}
	for len(seen) < devices {
		select {
		case m := <-dash.Msgs:
			var tr struct{ Type, Device string }
			if err := json.Unmarshal(m.Payload, &tr); err != nil {
				t.Fatalf("%s: %v", m.Topic, err)
			}
			if tr.Type == "ENTER" {
				seen[tr.Device] = true
			}
		case <-time.After(wait):
			t.Fatalf("the dashboard got %d of %d ENTERs; %v dropped by its queue", len(seen), devices,
				metric(t, srv, `edgefence_shed_total{stage="subscriber"}`))
		}
	}
	if n := metric(t, srv, `edgefence_shed_total{stage="subscriber"}`); n != 0 {
		t.Fatalf("%v messages dropped by the dashboard's queue", n)
	}
}
