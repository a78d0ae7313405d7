package broker_test

import (
	"net"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/loadgen"
)

// A tracker that sends a burst of QoS 1 pings in one write (a backlog
// after a reconnect) gets every PUBACK, in the order of its pings
// (MQTT-4.6.0-2) — the broker answers a burst in few writes, and that must
// never reorder or lose an acknowledgement — and each ping is evaluated.
func TestBurstOfPingsIsAcknowledgedInOrder(t *testing.T) {
	cfg := testConfig(t)
	cfg.PublishRate = 0 // the burst is above the default per-client rate
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dash")
	dash.Subscribe("geofence/#")

	c, err := net.Dial("tcp", srv.MQTTAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(wait))
	r := loadgen.NewReader(c, 4096, 1<<16)
	connect, err := loadgen.AppendConnect(nil, "burst", 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(connect); err != nil {
		t.Fatal(err)
	}
	if code, err := r.ReadConnack(); err != nil || code != 0 {
		t.Fatalf("CONNACK %d, %v", code, err)
	}

	const n = 200 // several read buffers' worth
	t0 := nowMs() - 10_000
	var burst []byte
	for i := 0; i < n; i++ {
		lat, lon := outLat, outLon
		if i == n-1 {
			lat, lon = museumLat, museumLon
		}
		if burst, err = loadgen.AppendPublish(burst, "devices/burst-1/telemetry", 1, uint16(i+1), canonical(lat, lon, t0+int64(i)*10)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Write(burst); err != nil {
		t.Fatal(err)
	}
	for want := uint16(1); want <= n; want++ {
		fh, body, err := r.Next()
		if err != nil {
			t.Fatalf("after %d PUBACKs: %v", want-1, err)
		}
		id, err := loadgen.ParseID(fh, body)
		if fh.Type != packets.Puback || err != nil || id != want {
			t.Fatalf("packet %d: type %d id %d (%v), want PUBACK %d", want, fh.Type, id, err, want)
		}
	}
	expectTransitions(t, dash, "ENTER zone-museumsinsel burst-1")
}
