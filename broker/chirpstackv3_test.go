package broker_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/ingest"
)

// ChirpStack v3's application server pointed at serve, with either of its
// marshalers and on either of its uplink topics: the uplinks are read
// (device id: the devEUI in hex, as the topic names it), and a tracker
// walking into the museum gives its ENTER, stamped by the gateway's GPS
// clock. Before, the ids at a v3 uplink's top level were not looked for,
// and every uplink was rejected as "device id level empty or too long"
// although the topic was fine.
func TestChirpStackV3IntoServe(t *testing.T) {
	cfg := testConfig(t)
	for _, f := range []string{"application/+/device/+/event/up=chirpstack", "application/+/device/+/rx=chirpstack"} {
		tf, err := ingest.ParseTelemetryFilter(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Telemetry = append(cfg.Telemetry, tf)
	}
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#", "edgefence/rejected/#")
	ns := connect5(t, srv.MQTTAddr(), "chirpstack-v3")

	now := time.Now().UTC()
	for i, c := range []struct{ fixture, topic, eui string }{
		{"chirpstack-v3-up.json", "application/7/device/0101010101010101/event/up", "0101010101010101"},
		{"chirpstack-v3-legacy-up.json", "application/7/device/0202020202020202/rx", "0202020202020202"},
	} {
		b, err := os.ReadFile("../evaluator/payload/lorawan/testdata/" + c.fixture)
		if err != nil {
			t.Fatal(err)
		}
		var up map[string]any
		if err := json.Unmarshal(b, &up); err != nil {
			t.Fatal(err)
		}
		// In the museum: the fixtures' position is just outside it.
		inside := map[string]any{"latitude": 52.519, "longitude": 13.399, "accuracy": 8.5}
		if _, ok := up["object"]; ok {
			up["devEUI"], up["object"] = c.eui, inside
		} else {
			js, _ := json.Marshal(inside)
			up["devEUI"], up["objectJSON"] = "AQEBAQEBAQE=", string(js) // base64 of 0x01 × 8
		}
		up["rxInfo"].([]any)[0].(map[string]any)["time"] = now.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano)
		delete(up, "publishedAt")
		b, _ = json.Marshal(up)
		if rc := ns.Publish(c.topic, 1, b); rc >= 0x80 {
			t.Fatalf("publish %s: PUBACK %#x", c.topic, rc)
		}
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		m := dash.Next("the two v3 trackers' ENTERs")
		if !strings.HasPrefix(m.Topic, "geofence/") {
			t.Fatalf("%s: %s", m.Topic, m.Payload)
		}
		var tr struct {
			Device, Fence, Type string
			Acc                 float64
			TimeSource          string `json:"time_source"`
		}
		if err := json.Unmarshal(m.Payload, &tr); err != nil {
			t.Fatal(err)
		}
		if tr.Fence != "zone-museumsinsel" || tr.Type != "ENTER" || tr.TimeSource != "gateway_gps" || tr.Acc != 8.5 {
			t.Errorf("%s: %s, want a gateway-GPS-stamped ENTER into the museum with acc 8.5", m.Topic, m.Payload)
		}
		seen[tr.Device] = true
	}
	if !seen["0101010101010101"] || !seen["0202020202020202"] {
		t.Errorf("devices %v, want the two devEUIs in hex", seen)
	}
}
