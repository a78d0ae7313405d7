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

// A v3 uplink is held to the topic's device as a v4 one is: a body whose
// devEUI (hex or base64) is not the topic's, on the LoRaWAN topic or a
// tracker's own, is refused with 0x87 and evaluated for nobody.
func TestChirpStackV3BodyNeverSpeaksForAnotherDevice(t *testing.T) {
	cfg := testConfig(t)
	tf, err := ingest.ParseTelemetryFilter("application/+/device/+/rx=chirpstack")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Telemetry = append(cfg.Telemetry, tf)
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	pub := connect5(t, srv.MQTTAddr(), "publisher")
	inside := `"object":{"latitude":52.519,"longitude":13.399},"fCnt":1,"deviceName":"truck-2"`
	for _, c := range []struct{ topic, eui string }{
		{"application/7/device/0101010101010101/event/up", `"0202020202020202"`},
		{"application/7/device/0101010101010101/event/up", `"AgICAgICAgI="`}, // base64 of 0x02 × 8
		{"application/7/device/0101010101010101/rx", `"0202020202020202"`},
		{"devices/truck-1/telemetry", `"0202020202020202"`},
	} {
		if rc := pub.Publish(c.topic, 1, []byte(`{"devEUI":`+c.eui+`,`+inside+`}`)); rc != 0x87 {
			t.Errorf("%s naming devEUI %s: PUBACK %#x, want 0x87", c.topic, c.eui, rc)
		}
	}
	if got := dash.Sync(); len(got) != 0 {
		t.Errorf("%d transitions (first on %s), want none", len(got), got[0].Topic)
	}
	if n := metric(t, srv, `edgefence_rejected_total{reason="device_mismatch"}`); n != 4 {
		t.Errorf(`edgefence_rejected_total{reason="device_mismatch"} = %v, want 4`, n)
	}
}
