package broker_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/syncbuf"
)

// The LoRaWAN network servers' uplink topics, beside the defaults.
var lorawanFilters = []string{"application/+/device/+/event/up=chirpstack", "v3/+/devices/+/up=ttn"}

// identityUsers publish for themselves, or (the gateway) for any device.
var identityUsers = append([]testUser{
	{name: "truck-3", role: "device"},
	{name: "app-0101010101010101", role: "device"}, // its ChirpStack topic
	{name: "lns", role: "gateway"},
}, aclUsers...)

// chirpStackUp is a ChirpStack v4 uplink of devEui at lat, lon.
func chirpStackUp(eui string, fcnt int, lat, lon float64) []byte {
	b, _ := json.Marshal(map[string]any{
		"time":       time.Now().UTC().Format(time.RFC3339Nano),
		"deviceInfo": map[string]any{"devEui": eui, "deviceName": "name-" + eui},
		"devAddr":    "00189440", "fCnt": fcnt,
		"object": map[string]any{"latitude": lat, "longitude": lon},
	})
	return b
}

// ttnUp is a The Things Stack v3 uplink of device id at lat, lon.
func ttnUp(id string, fcnt int, lat, lon float64) []byte {
	b, _ := json.Marshal(map[string]any{
		"end_device_ids": map[string]any{"device_id": id, "dev_eui": "70B3D57ED0000001"},
		"received_at":    time.Now().UTC().Format(time.RFC3339Nano),
		"uplink_message": map[string]any{"f_cnt": fcnt, "decoded_payload": map[string]any{"latitude": lat, "longitude": lon}},
	})
	return b
}

// identityServer starts a broker with the identity users and the LoRaWAN
// filters besides the defaults.
func identityServer(t *testing.T) broker.Config {
	t.Helper()
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, identityUsers...)
	for _, f := range lorawanFilters {
		tf, err := ingest.ParseTelemetryFilter(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Telemetry = append(cfg.Telemetry, tf)
	}
	return cfg
}

// A device publishing, on its own topic, a body that names another device
// speaks for nobody but itself: on the canonical, OwnTracks and both
// LoRaWAN topic styles the publish is refused with 0x87, reported on the
// reject topic under the topic's device, and no other device's state,
// transitions or frame counters change. Every case here made the body's
// device ENTER before.
func TestBodyNeverSpeaksForAnotherDevice(t *testing.T) {
	cfg := identityServer(t)
	srv := start(t, cfg)
	addr := srv.MQTTAddr()
	dash := mustDial5(t, addr, "wall", login("wall"))
	dash.Subscribe("geofence/#")
	ops := mustDial5(t, addr, "ops", login("ops"))
	ops.Subscribe("edgefence/rejected/#")

	truck1 := mustDial5(t, addr, "truck-1", login("truck-1"))
	alice := mustDial5(t, addr, "alice-phone", login("alice-phone"))
	cs := mustDial5(t, addr, "app-0101", login("app-0101010101010101"))
	lns := mustDial5(t, addr, "lns", login("lns"))
	for _, tc := range []struct {
		name  string
		cl    *client5
		topic string
		body  []byte
		under string // the reject topic's device level
	}{
		{"canonical topic, ChirpStack body", truck1, "devices/truck-1/telemetry", chirpStackUp("truck-2", 1, museumLat, museumLon), "truck-1"},
		{"canonical topic, TTS body", truck1, "devices/truck-1/telemetry", ttnUp("truck-2", 1, museumLat, museumLon), "truck-1"},
		{"canonical topic, body id with levels", truck1, "devices/truck-1/telemetry", chirpStackUp("truck-2/x/\u0001", 1, museumLat, museumLon), "truck-1"},
		{"OwnTracks topic, ChirpStack body", alice, "owntracks/alice/phone", chirpStackUp("truck-2", 2, museumLat, museumLon), "alice-phone"},
		{"ChirpStack topic, another DevEUI", cs, "application/app/device/0101010101010101/event/up", chirpStackUp("0202020202020202", 3, museumLat, museumLon), "app-0101010101010101"},
		{"ChirpStack topic by a gateway, another DevEUI", lns, "application/app/device/0303030303030303/event/up", chirpStackUp("0202020202020202", 4, museumLat, museumLon), "app-0303030303030303"},
		{"TTS topic by a gateway, another device id", lns, "v3/app@ttn/devices/dev-a/up", ttnUp("truck-2", 5, museumLat, museumLon), "app@ttn-dev-a"},
	} {
		if rc := tc.cl.Publish(tc.topic, 1, tc.body); rc != denied {
			t.Errorf("%s: PUBACK %#x, want 0x87", tc.name, rc)
		}
		m := ops.Next(tc.name + ": its report on the reject topic")
		if want := "edgefence/rejected/" + tc.under; m.Topic != want || !strings.Contains(string(m.Payload), `"reason":"device_mismatch"`) || !json.Valid(m.Payload) {
			t.Errorf("%s: reported on %q: %s, want %s and device_mismatch", tc.name, m.Topic, m.Payload, want)
		}
	}
	// An OwnTracks location is its topic's, whatever else it carries.
	if rc := alice.Publish("owntracks/alice/phone", 1, fmt.Appendf(nil,
		`{"_type":"location","lat":%v,"lon":%v,"tst":%d,"acc":5,"tid":"t2","topic":"owntracks/truck/2"}`,
		museumLat, museumLon, time.Now().Unix()-30)); rc != 0 {
		t.Fatalf("own OwnTracks location: PUBACK %#x", rc)
	}
	expectTransitions(t, dash, "ENTER zone-museumsinsel alice-phone")

	// The victims' own messages are taken as before: nothing pre-empted
	// their frame counters (the forged frames had these fCnts).
	truck2 := mustDial5(t, addr, "truck-2", login("truck-2"))
	if rc := truck2.Publish("devices/truck-2/telemetry", 1, chirpStackUp("truck-2", 1, museumLat, museumLon)); rc != 0 {
		t.Fatalf("truck-2's own uplink, fCnt 1: PUBACK %#x", rc)
	}
	expectTransitions(t, dash, "ENTER zone-museumsinsel truck-2")
	if rc := lns.Publish("application/app/device/0202020202020202/event/up", 1, chirpStackUp("0202020202020202", 3, museumLat, museumLon)); rc != 0 {
		t.Fatalf("0202…'s own uplink, fCnt 3: PUBACK %#x", rc)
	}
	expectTransitions(t, dash, "ENTER zone-museumsinsel 0202020202020202")
	time.Sleep(3 * cfg.Engine.Hold)
	select {
	case m := <-dash.Msgs:
		t.Fatalf("a transition nobody earned: %s %s", m.Topic, m.Payload)
	default:
	}
	if got := srv.Engine().Stats().Devices; got != 3 {
		t.Errorf("%d devices, want 3 (alice-phone, truck-2, 0202020202020202)", got)
	}
}

// One credential mints no ghost devices: 600 uplink bodies, each naming a
// new device, published within 10 s by a gateway (600 topics' devices) and
// by a device on its own topic (as many as its rate limit lets through),
// create none: each is refused with 0x87, counted, and logged once a
// second at most.
func TestBodyMintedDevicesAreNotCreated(t *testing.T) {
	cfg := identityServer(t)
	var logs syncbuf.Buffer
	cfg.Log = slog.New(slog.NewTextHandler(&logs, nil))
	srv := start(t, cfg)
	lns := mustDial5(t, srv.MQTTAddr(), "lns", login("lns"))
	truck := mustDial5(t, srv.MQTTAddr(), "truck-3", login("truck-3"))
	began := time.Now()
	deadline := began.Add(10 * time.Second)
	for i := range 600 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d publishes in 10 s", i)
		}
		body := chirpStackUp(fmt.Sprintf("ghost-%03d", i), i+1, museumLat, museumLon)
		if rc := lns.Publish(fmt.Sprintf("devices/truck-%03d/telemetry", i), 1, body); rc != denied {
			t.Fatalf("gateway, ghost %d: PUBACK %#x, want 0x87", i, rc)
		}
		if i < 100 { // the device's burst
			if rc := truck.Publish("devices/truck-3/telemetry", 1, body); rc != denied {
				t.Fatalf("truck-3, ghost %d: PUBACK %#x, want 0x87", i, rc)
			}
		}
	}
	if got := srv.Engine().Stats().Devices; got != 0 {
		t.Errorf("%d devices after 700 body-minted ids, want 0", got)
	}
	// One line per second of refusals, whatever their number: a second
	// more for each the publishes took (without the limit: 700 lines).
	lines := strings.Count(logs.String(), "reason=device_mismatch")
	if limit := 1 + int(time.Since(began)/time.Second) + 1; lines < 1 || lines > limit {
		t.Errorf("700 device_mismatch refusals logged %d lines, want 1 to %d:\n%.2000s", lines, limit, logs.String())
	}
	if got := metric(t, srv, `edgefence_rejected_total{reason="device_mismatch"}`); got != 700 {
		t.Errorf("device_mismatch counted %v times, want 700", got)
	}
}
