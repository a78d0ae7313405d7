package broker_test

// The low findings of issue 21: keepalive counts packets, and fences are
// bounded.

import (
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/broker"
)

// Keepalive is about packets: a client must complete one within 1.5 ×
// keepalive. A PUBLISH dribbled a byte at a time is not one, however
// steadily the bytes come (the issue held a 4 s keepalive open 22 s).
func TestKeepaliveCountsPacketsNotBytes(t *testing.T) {
	cfg := testConfig(t)
	srv := start(t, cfg)
	r := rawDial(t, srv.MQTTAddr())
	const keepalive = 2 // closed 3 s after the last whole packet
	if rc, err := r.connect("dribbler", anonymous, keepalive); err != nil || rc != 0 {
		t.Fatalf("connect: %#x %v", rc, err)
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		// A PUBLISH announcing 200 bytes, then a byte every 250 ms.
		if _, err := r.conn.Write([]byte{0x30, 0xc8, 0x01}); err != nil {
			return
		}
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := r.conn.Write([]byte{'x'}); err != nil {
					return
				}
			}
		}
	}()
	// 1.5 × keepalive is 3 s, and mochi's deadline lies up to 1 s past
	// it; 2 × keepalive + 2 s leaves room for a busy machine and none for
	// a deadline moved by each byte.
	took, _ := r.closedByServer(t, "dribbled PUBLISH", 2*keepalive*time.Second+2*time.Second)
	close(stop)
	<-done
	t.Logf("closed after %v", took.Round(10*time.Millisecond))
}

// A circle larger than the Earth (the radius 1e12 m) is refused
// with a clear error, over MQTT as in the fence file, and the fences in
// force stay.
func TestFenceGeometryBounds(t *testing.T) {
	cfg := testConfig(t)
	srv := start(t, cfg)
	admin := connect5(t, srv.MQTTAddr(), "admin")
	for _, f := range []string{
		`{"type":"Feature","id":"huge","properties":{"radius":1e12},"geometry":{"type":"Point","coordinates":[13.4,52.52]}}`,
		`{"type":"Feature","id":"big","properties":{"radius":20000001},"geometry":{"type":"Point","coordinates":[13.4,52.52]}}`,
		`{"type":"Feature","id":"off","properties":{"radius":100},"geometry":{"type":"Point","coordinates":[13.4,95]}}`,
	} {
		fc := `{"type":"FeatureCollection","features":[` + f + `]}`
		if rc := admin.Publish("edgefence/admin/fences", 1, []byte(fc)); rc != 0x99 {
			t.Errorf("fence set %s: PUBACK %#x, want 0x99 (refused)", f, rc)
		}
	}
	admin.Subscribe("geofence/+/bounds-1")
	admin.ping("bounds-1", museumLat, museumLon, nowMs()-10_000)
	expectTransitions(t, admin, "ENTER zone-museumsinsel bounds-1") // the old fences

	bad := writeFences(t, `{"type":"Feature","id":"huge","properties":{"radius":1e12},"geometry":{"type":"Point","coordinates":[13.4,52.52]}}`)
	cfg = testConfig(t)
	cfg.Fences = bad
	if s, err := broker.Start(cfg); err == nil {
		closeServer(t, s)
		t.Fatal("started with a circle of radius 1e12 m")
	} else if !strings.Contains(err.Error(), "radius") || !strings.Contains(err.Error(), "20000 km") {
		t.Errorf("start with a circle of radius 1e12 m: %v, want an error naming the radius and its bound", err)
	}
}
