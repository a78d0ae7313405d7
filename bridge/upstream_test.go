package bridge

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/ingest"
)

// Another edgefence serve as the upstream broker, in-process on loopback,
// with a user file (no anonymous access): the bridge logs in with
// --username/--password as an admin, takes the pings serve routes to
// subscribers, and publishes under its own prefix (serve reserves its
// own topics for itself). Both engines see the same pings, so both
// publish the same transitions.
func TestServeUpstream(t *testing.T) {
	hash := hashed(t)
	users := filepath.Join(t.TempDir(), "users.yaml")
	var y strings.Builder
	y.WriteString("users:\n")
	for _, u := range []struct{ name, role string }{{"bridge", "admin"}, {"ops", "admin"}, {"truck-1", "device"}} {
		fmt.Fprintf(&y, "  - username: %s\n    role: %s\n    password: %q\n", u.name, u.role, hash)
	}
	if err := os.WriteFile(users, []byte(y.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	scfg := broker.DefaultConfig()
	scfg.MQTTAddr = "127.0.0.1:0"
	scfg.HTTPAddr = ""
	scfg.Fences = filepath.Join("..", "fences.geojson")
	scfg.FencesPoll = 0
	scfg.DataDir = t.TempDir()
	scfg.Engine.Hold = 100 * time.Millisecond
	scfg.Engine.MaxSpeed = 0 // the fixtures jump kilometres in a second
	scfg.Auth = users
	scfg.AllowAnonymous = false
	scfg.CloseTimeout = wait
	scfg.Log = testLog()
	srv, err := broker.Start(scfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })

	cfg := testConfig(t, "mqtt://"+srv.MQTTAddr())
	cfg.Username, cfg.Password = "bridge", secret
	cfg.TransitionPrefix, cfg.LateTopic, cfg.RejectTopic = "bridged", "bridged-late", "bridged-rejected"
	b := startBridge(t, cfg)
	o := observe(t, "mqtt://"+srv.MQTTAddr(), "ops", secret, "geofence/#", "bridged/#")
	tr := connectTracker(t, srv.MQTTAddr(), "truck-1", secret)
	base := time.Now().UnixMilli() - 60_000
	for k, pos := range [][2]float64{{museumLat, museumLon}, {outLat, outLon}, {museumLat, museumLon}} {
		tr.ping("truck-1", pos[0], pos[1], base+int64(k)*1000)
	}
	served := o.waitTransitions("geofence", 3)
	bridged := o.waitTransitions("bridged", 3)
	want := []string{
		fmt.Sprintf("truck-1 zone-museumsinsel ENTER %d", base),
		fmt.Sprintf("truck-1 zone-museumsinsel EXIT %d", base+1000),
		fmt.Sprintf("truck-1 zone-museumsinsel ENTER %d", base+2000),
	}
	if !slices.Equal(served, want) || !slices.Equal(bridged, want) {
		t.Errorf("serve published %q,\nthe bridge %q,\nwant both %q", served, bridged, want)
	}
	if n := b.hm.Received.Get(); n != 3 {
		t.Errorf("bridge received %d pings, want 3", n)
	}
}

// Two bridges share the telemetry through an MQTT 5 shared subscription
// on Mosquitto (round-robin): together they take every ping exactly once.
// Per-device state splits between them, which is why this is not a way to
// scale unless the broker keeps each device on one member (see
// docs/bridge.md); the test shows the split in its log and asserts only
// what is deterministic.
func TestSharedSubscription(t *testing.T) {
	m := startMosquitto(t)
	shared, err := ingest.ParseTelemetryFilter("$share/edgefence/devices/+/telemetry")
	if err != nil {
		t.Fatal(err)
	}
	var bridges []*Bridge
	for range 2 {
		cfg := testConfig(t, m.url())
		cfg.Telemetry = []ingest.TelemetryFilter{shared}
		bridges = append(bridges, startBridge(t, cfg))
	}
	o := observe(t, m.url(), "", "", "geofence/#")
	tr := connectTracker(t, m.addr(), "", "")
	base := time.Now().UnixMilli() - 60_000
	// Three devices: round-robin over an odd number alternates each
	// device's pings between the bridges.
	const devices, rounds = 3, 4
	for k := range rounds {
		for d := range devices {
			lat, lon := museumLat, museumLon
			if k%2 == 1 {
				lat, lon = outLat, outLon
			}
			tr.ping(fmt.Sprintf("d%d", d), lat, lon, base+int64(k)*1000)
		}
	}
	eventually(t, "every ping taken by one bridge or the other", func() bool {
		return bridges[0].hm.Received.Get()+bridges[1].hm.Received.Get() == devices*rounds
	})
	for i, b := range bridges {
		if b.hm.Received.Get() == 0 {
			t.Errorf("bridge %d took no ping: the shared subscription did not split", i)
		}
	}
	// A single bridge would publish devices×rounds transitions (every ping
	// crosses the edge). Split, each bridge sees a thinned history of
	// every device and publishes what that history implies.
	for _, b := range bridges {
		eventually(t, "both bridges to decide and publish", func() bool { st := b.engine.Stats(); return st.Buffered == 0 && st.Queued == 0 && b.Queued() == 0 })
	}
	for i, b := range bridges {
		t.Logf("bridge %d: took %d pings, published %v transitions", i, b.hm.Received.Get(), b.engine.Metrics().Transitions[0].Get()+b.engine.Metrics().Transitions[1].Get())
	}
	t.Logf("published together: %d transitions; one bridge would publish %d: %q", len(o.transitions("geofence")), devices*rounds, o.transitions("geofence"))
}
