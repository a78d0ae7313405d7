package homeassistant_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/internal/mqtttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const wait = 5 * time.Second

// option is one documented configuration variable of an MQTT entity
// (https://www.home-assistant.io/integrations/device_tracker.mqtt/,
// .../sensor.mqtt/, and the discovery page for device and origin): its
// JSON type, and whether it is required.
type option struct {
	kind     string // string, number, bool, list, object, null-or-string
	required bool
}

// The options edgefence may send, as Home Assistant documents them
// (long names: edgefence sends no abbreviations).
var (
	common = map[string]option{
		"name": {"null-or-string", false}, "unique_id": {"string", false}, "default_entity_id": {"string", false},
		"state_topic": {"string", false}, "json_attributes_topic": {"string", false},
		"availability_topic": {"string", false}, "payload_available": {"string", false}, "payload_not_available": {"string", false},
		"qos": {"number", false}, "icon": {"string", false}, "device": {"object", false}, "origin": {"object", false},
	}
	trackerOnly = map[string]option{
		"payload_home": {"string", false}, "payload_not_home": {"string", false}, "source_type": {"string", false},
	}
	sensorOnly = map[string]option{
		"state_topic": {"string", true}, "unit_of_measurement": {"string", false}, "state_class": {"string", false},
	}
	deviceOptions = map[string]option{
		"identifiers": {"list", false}, "name": {"string", false}, "manufacturer": {"string", false},
		"model": {"string", false}, "via_device": {"string", false}, "sw_version": {"string", false},
	}
	originOptions = map[string]option{"name": {"string", true}, "sw_version": {"string", false}, "support_url": {"string", false}}
	sourceTypes   = []string{"gps", "router", "bluetooth", "bluetooth_le"}
	stateClasses  = []string{"measurement", "total", "total_increasing", "measurement_angle"}
)

func merge(ms ...map[string]option) map[string]option {
	out := map[string]option{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// checkSchema checks a discovery payload field by field.
func checkSchema(t *testing.T, what string, cfg map[string]any, schema map[string]option) {
	t.Helper()
	for k, o := range schema {
		if _, ok := cfg[k]; o.required && !ok {
			t.Errorf("%s: required %q missing", what, k)
		}
	}
	for k, v := range cfg {
		o, ok := schema[k]
		if !ok {
			t.Errorf("%s: %q is not a documented option", what, k)
			continue
		}
		var good bool
		switch o.kind {
		case "string":
			_, good = v.(string)
		case "null-or-string":
			_, good = v.(string)
			good = good || v == nil
		case "number":
			_, good = v.(float64)
		case "bool":
			_, good = v.(bool)
		case "list":
			_, good = v.([]any)
		case "object":
			_, good = v.(map[string]any)
		}
		if !good {
			t.Errorf("%s: %q = %#v, want a %s", what, k, v, o.kind)
		}
	}
	if dev, ok := cfg["device"].(map[string]any); ok {
		checkSchema(t, what+" device", dev, deviceOptions)
		if ids, _ := dev["identifiers"].([]any); len(ids) == 0 {
			t.Errorf("%s: device without identifiers (Home Assistant needs one to register it)", what)
		}
	}
	if org, ok := cfg["origin"].(map[string]any); ok {
		checkSchema(t, what+" origin", org, originOptions)
	}
	if st, ok := cfg["source_type"].(string); ok && !contains(sourceTypes, st) {
		t.Errorf("%s: source_type %q, want one of %v", what, st, sourceTypes)
	}
	if sc, ok := cfg["state_class"].(string); ok && !contains(stateClasses, sc) {
		t.Errorf("%s: state_class %q, want one of %v", what, sc, stateClasses)
	}
	if id, ok := cfg["default_entity_id"].(string); ok && !strings.Contains(id, ".") {
		t.Errorf("%s: default_entity_id %q, want domain.object_id", what, id)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// retained collects the last message per topic a client got.
type retained map[string]string

func (r retained) take(cl *mqtttest.Client) {
	for _, m := range cl.Sync() {
		r[m.Topic] = string(m.Payload)
	}
}

// until takes messages until cond holds, for at most wait.
func (r retained) until(t *testing.T, cl *mqtttest.Client, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; have %v", what, wait, r)
		}
		select {
		case m := <-cl.Msgs:
			r[m.Topic] = string(m.Payload)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// A subscriber at Home Assistant's discovery prefix sees each fence as an
// occupancy sensor and each device as a device_tracker, in payloads that
// follow the documented schema; a device's state is its fence and its
// attributes its position; an evicted device's and a removed fence's
// entities are deleted (empty retained config); availability is online.
func TestDiscoveryOverMQTT(t *testing.T) {
	fences, err := os.ReadFile(filepath.Join("..", "fences.geojson"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fences.geojson")
	if err := os.WriteFile(path, fences, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := broker.DefaultConfig()
	cfg.MQTTAddr, cfg.HTTPAddr, cfg.DataDir, cfg.Fences, cfg.FencesPoll = "127.0.0.1:0", "", "", path, 0
	cfg.Engine.IdleTimeout = 3 * time.Second // longer than discovery's 2 s interval: walker is announced before it goes
	cfg.HomeAssistant = "homeassistant"
	cfg.CloseTimeout = wait
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := broker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})

	ha := mqtttest.Connect(t, srv.MQTTAddr(), "homeassistant", wait)
	ha.Subscribe("homeassistant/#", "edgefence/ha/#")
	got := retained{}
	got.take(ha)
	if got["edgefence/ha/status"] != "online" {
		t.Errorf("availability %q, want online", got["edgefence/ha/status"])
	}
	sensor := "homeassistant/sensor/edgefence/fence_zone-museumsinsel/config"
	var sc map[string]any
	if err := json.Unmarshal([]byte(got[sensor]), &sc); err != nil {
		t.Fatalf("%s: %v (%q)", sensor, err, got[sensor])
	}
	checkSchema(t, "fence sensor", sc, merge(common, sensorOnly))
	if sc["state_topic"] != "edgefence/ha/fence/zone-museumsinsel/state" || got["edgefence/ha/fence/zone-museumsinsel/state"] != "0" {
		t.Errorf("sensor state topic %v holds %q, want 0", sc["state_topic"], got["edgefence/ha/fence/zone-museumsinsel/state"])
	}
	n := 0
	for topic := range got {
		if strings.HasPrefix(topic, "homeassistant/sensor/") {
			n++
		}
	}
	if n != 5 {
		t.Errorf("%d fence sensors, want 5", n)
	}

	tracker := mqtttest.Connect(t, srv.MQTTAddr(), "tracker", wait)
	tracker.Publish("devices/van-1/telemetry", 1, []byte(`{"lat":52.52,"lon":13.40,"ts":`+ms(time.Now())+`}`))
	tracker.Publish("devices/walker/telemetry", 1, []byte(`{"lat":52.50,"lon":13.30,"ts":`+ms(time.Now())+`}`))
	vanCfg := "homeassistant/device_tracker/edgefence/device_van-1/config"
	walkerCfg := "homeassistant/device_tracker/edgefence/device_walker/config"
	got.until(t, ha, "van-1 announced, in the museum", func() bool {
		return got[vanCfg] != "" && got["edgefence/ha/device/van-1/state"] == "zone-museumsinsel" &&
			got["edgefence/ha/fence/zone-museumsinsel/state"] == "1" && got[walkerCfg] != ""
	})
	var tc map[string]any
	if err := json.Unmarshal([]byte(got[vanCfg]), &tc); err != nil {
		t.Fatal(err)
	}
	checkSchema(t, "device tracker", tc, merge(common, trackerOnly))
	if tc["state_topic"] != "edgefence/ha/device/van-1/state" || tc["json_attributes_topic"] != "edgefence/ha/device/van-1/attributes" || tc["availability_topic"] != "edgefence/ha/status" {
		t.Errorf("tracker topics %v %v %v", tc["state_topic"], tc["json_attributes_topic"], tc["availability_topic"])
	}
	var attrs map[string]float64
	if err := json.Unmarshal([]byte(got["edgefence/ha/device/van-1/attributes"]), &attrs); err != nil {
		t.Fatal(err)
	}
	if d := attrs["latitude"] - 52.52; d > 1e-5 || d < -1e-5 || attrs["gps_accuracy"] <= 0 {
		t.Errorf("attributes %v, want latitude 52.52 and a gps_accuracy", attrs)
	}
	if got["edgefence/ha/device/walker/state"] != "not_home" {
		t.Errorf("walker's state %q, want not_home", got["edgefence/ha/device/walker/state"])
	}

	// walker, outside every fence, is evicted after the idle timeout:
	// its entity goes. van-1 is inside a fence: it stays.
	got.until(t, ha, "walker's entity removed", func() bool { v, ok := got[walkerCfg]; return ok && v == "" })
	if got[vanCfg] == "" {
		t.Error("van-1, inside a fence, was removed with walker")
	}

	// The museum fence is removed: its sensor goes, and van-1 is outside.
	var fc struct {
		Type     string            `json:"type"`
		Features []json.RawMessage `json:"features"`
	}
	if err := json.Unmarshal(fences, &fc); err != nil {
		t.Fatal(err)
	}
	var kept []json.RawMessage
	for _, f := range fc.Features {
		if !strings.Contains(string(f), `"zone-museumsinsel"`) {
			kept = append(kept, f)
		}
	}
	fc.Features = kept
	b, _ := json.Marshal(fc)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tracker.Publish("devices/van-1/telemetry", 1, []byte(`{"lat":52.52,"lon":13.40,"ts":`+ms(time.Now())+`}`)) // not idle
	if err := srv.ReloadFences(); err != nil {
		t.Fatal(err)
	}
	got.until(t, ha, "the museum sensor removed, van-1 not_home (or, idle outside, removed)", func() bool {
		v, ok := got[sensor]
		van, gone := got["edgefence/ha/device/van-1/state"], got[vanCfg] == ""
		return ok && v == "" && (van == "not_home" || gone && van == "")
	})
}

func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
