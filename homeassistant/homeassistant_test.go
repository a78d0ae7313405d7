package homeassistant_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
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
// .../sensor.mqtt/, .../binary_sensor.mqtt/, and the discovery page for
// device and origin): its JSON type, and whether it is required.
type option struct {
	kind     string // string, number, bool, list, object, null-or-string
	required bool
}

// The options edgefence may send, as Home Assistant documents them
// (long names: edgefence sends no abbreviations). unique_id, device and
// availability are optional to Home Assistant, but an entity without
// them cannot be renamed or grouped in its UI, and stays "available"
// after the server is gone: edgefence sends them on every entity.
var (
	common = map[string]option{
		"name": {"null-or-string", false}, "unique_id": {"string", true}, "default_entity_id": {"string", false},
		"state_topic": {"string", false}, "json_attributes_topic": {"string", false},
		"availability_topic": {"string", true}, "payload_available": {"string", false}, "payload_not_available": {"string", false},
		"qos": {"number", false}, "icon": {"string", false}, "device": {"object", true}, "origin": {"object", false},
	}
	trackerOnly = map[string]option{
		"payload_home": {"string", false}, "payload_not_home": {"string", false}, "source_type": {"string", false},
	}
	sensorOnly = map[string]option{
		"state_topic": {"string", true}, "unit_of_measurement": {"string", false}, "state_class": {"string", false},
	}
	binaryOnly = map[string]option{
		"state_topic": {"string", true}, "payload_on": {"string", false}, "payload_off": {"string", false},
		"device_class": {"string", false},
	}
	deviceOptions = map[string]option{
		"identifiers": {"list", false}, "name": {"string", false}, "manufacturer": {"string", false},
		"model": {"string", false}, "via_device": {"string", false}, "sw_version": {"string", false},
	}
	originOptions = map[string]option{"name": {"string", true}, "sw_version": {"string", false}, "support_url": {"string", false}}
	sourceTypes   = []string{"gps", "router", "bluetooth", "bluetooth_le"}
	stateClasses  = []string{"measurement", "total", "total_increasing", "measurement_angle"}
	// Binary sensor device classes that say someone is somewhere.
	binaryClasses = []string{"occupancy", "presence"}
	// The schema of each domain edgefence announces, by the discovery
	// topic's component level.
	schemas = map[string]map[string]option{
		"device_tracker": merge(common, trackerOnly),
		"sensor":         merge(common, sensorOnly),
		"binary_sensor":  merge(common, binaryOnly),
	}
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
	if dc, ok := cfg["device_class"].(string); ok && !contains(binaryClasses, dc) {
		t.Errorf("%s: device_class %q, want one of %v", what, dc, binaryClasses)
	}
	if id, ok := cfg["default_entity_id"].(string); ok && !strings.Contains(id, ".") {
		t.Errorf("%s: default_entity_id %q, want domain.object_id", what, id)
	}
}

// checkAll checks every discovery config in r against its domain's
// schema (an empty one deletes an entity) and returns how many there are
// per domain.
func checkAll(t *testing.T, r retained) map[string]int {
	t.Helper()
	n := map[string]int{}
	for topic, payload := range r {
		levels := strings.Split(topic, "/")
		if levels[0] != "homeassistant" || payload == "" {
			continue
		}
		schema, ok := schemas[levels[1]]
		if len(levels) != 5 || levels[4] != "config" || !ok {
			t.Errorf("%s: not a discovery topic of an announced domain", topic)
			continue
		}
		var cfg map[string]any
		if err := json.Unmarshal([]byte(payload), &cfg); err != nil {
			t.Errorf("%s: %v", topic, err)
			continue
		}
		checkSchema(t, topic, cfg, schema)
		n[levels[1]]++
	}
	return n
}

// start runs serve with discovery on a copy of the demo fences, and
// returns it with the copy's path and the original bytes.
func start(t *testing.T, edit func(*broker.Config)) (*broker.Server, string, []byte) {
	t.Helper()
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
	cfg.HomeAssistant = "homeassistant"
	cfg.CloseTimeout = wait
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	edit(&cfg)
	srv, err := broker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return srv, path, fences
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
// occupancy sensor, each device as a device_tracker with a binary_sensor
// per fence, in payloads that follow the documented schema (every entity
// with unique_id, device and availability); a device's state is the name
// of its fence, its attributes its position with the ping's accuracy;
// an evicted device's and a removed fence's entities are deleted (empty
// retained config); availability is online.
func TestDiscoveryOverMQTT(t *testing.T) {
	srv, path, fences := start(t, func(cfg *broker.Config) {
		cfg.Engine.IdleTimeout = 3 * time.Second // longer than discovery's 2 s interval: walker is announced before it goes
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
	if sc["state_topic"] != "edgefence/ha/fence/zone-museumsinsel/state" || got["edgefence/ha/fence/zone-museumsinsel/state"] != "0" {
		t.Errorf("sensor state topic %v holds %q, want 0", sc["state_topic"], got["edgefence/ha/fence/zone-museumsinsel/state"])
	}
	if n := checkAll(t, got); n["sensor"] != 5 || n["device_tracker"]+n["binary_sensor"] != 0 {
		t.Errorf("entities %v, want 5 fence sensors and nothing else", n)
	}

	tracker := mqtttest.Connect(t, srv.MQTTAddr(), "tracker", wait)
	tracker.Publish("devices/van-1/telemetry", 1, []byte(`{"lat":52.52,"lon":13.40,"acc":8.5,"ts":`+ms(time.Now())+`}`))
	tracker.Publish("devices/walker/telemetry", 1, []byte(`{"lat":52.50,"lon":13.30,"ts":`+ms(time.Now())+`}`))
	vanCfg := "homeassistant/device_tracker/edgefence/device_van-1/config"
	walkerCfg := "homeassistant/device_tracker/edgefence/device_walker/config"
	vanIn := "homeassistant/binary_sensor/edgefence/in_van-1_xzone-museumsinsel/config"
	got.until(t, ha, "van-1 announced, in the museum", func() bool {
		return got[vanCfg] != "" && got["edgefence/ha/device/van-1/state"] == "Museumsinsel" &&
			got["edgefence/ha/fence/zone-museumsinsel/state"] == "1" && got[walkerCfg] != "" &&
			got["edgefence/ha/device/van-1/in/zone-museumsinsel"] == "ON"
	})
	if n := checkAll(t, got); n["sensor"] != 5 || n["device_tracker"] != 2 || n["binary_sensor"] != 10 {
		t.Errorf("entities %v, want 5 fence sensors, 2 trackers and 2×5 occupancy sensors", n)
	}
	var tc, bc map[string]any
	if err := json.Unmarshal([]byte(got[vanCfg]), &tc); err != nil {
		t.Fatal(err)
	}
	if tc["state_topic"] != "edgefence/ha/device/van-1/state" || tc["json_attributes_topic"] != "edgefence/ha/device/van-1/attributes" || tc["availability_topic"] != "edgefence/ha/status" {
		t.Errorf("tracker topics %v %v %v", tc["state_topic"], tc["json_attributes_topic"], tc["availability_topic"])
	}
	if err := json.Unmarshal([]byte(got[vanIn]), &bc); err != nil {
		t.Fatalf("%s: %v (%q)", vanIn, err, got[vanIn])
	}
	if bc["name"] != "Museumsinsel" || bc["state_topic"] != "edgefence/ha/device/van-1/in/zone-museumsinsel" ||
		!reflect.DeepEqual(bc["device"], tc["device"]) {
		t.Errorf("van-1's museum occupancy: name %v, state topic %v, device %v (want the tracker's %v)", bc["name"], bc["state_topic"], bc["device"], tc["device"])
	}
	if v := got["edgefence/ha/device/van-1/in/zone-tiergarten"]; v != "OFF" {
		t.Errorf("van-1 in the Tiergarten: %q, want OFF", v)
	}
	var attrs map[string]float64
	if err := json.Unmarshal([]byte(got["edgefence/ha/device/van-1/attributes"]), &attrs); err != nil {
		t.Fatal(err)
	}
	if d := attrs["latitude"] - 52.52; d > 1e-5 || d < -1e-5 || attrs["gps_accuracy"] != 8.5 {
		t.Errorf("attributes %v, want latitude 52.52 and the ping's acc, 8.5, as gps_accuracy", attrs)
	}
	if a := got["edgefence/ha/device/walker/attributes"]; strings.Contains(a, "gps_accuracy") {
		t.Errorf("walker's attributes %s: an accuracy its ping did not have", a)
	}
	if got["edgefence/ha/device/walker/state"] != "not_home" {
		t.Errorf("walker's state %q, want not_home", got["edgefence/ha/device/walker/state"])
	}

	// walker, outside every fence, is evicted after the idle timeout:
	// its entities go. van-1 is inside a fence: it stays.
	walkerIn := "homeassistant/binary_sensor/edgefence/in_walker_xzone-tiergarten/config"
	got.until(t, ha, "walker's entities removed", func() bool {
		v, ok := got[walkerCfg]
		w, wok := got[walkerIn]
		return ok && v == "" && wok && w == ""
	})
	if got[vanCfg] == "" {
		t.Error("van-1, inside a fence, was removed with walker")
	}

	// The museum fence is removed: its sensor goes, and so does van-1's
	// occupancy of it; van-1 is outside.
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
	got.until(t, ha, "the museum sensor and van-1's occupancy removed, van-1 not_home (or, idle outside, removed)", func() bool {
		v, ok := got[sensor]
		in, inOK := got[vanIn]
		van, gone := got["edgefence/ha/device/van-1/state"], got[vanCfg] == ""
		return ok && v == "" && inOK && in == "" && (van == "not_home" || gone && van == "")
	})
}

// A device is announced only once the engine has evaluated a ping of it:
// while its first ping waits in the reorder buffer (a hold longer than
// discovery's interval), Home Assistant hears nothing of it, so it never
// sees the device not_home and then in a zone (an automation on leaving
// home would fire). Its first state is the name of the fence it is in,
// its gps_accuracy the ping's acc.
func TestDeviceAnnouncedAfterItsFirstEvaluatedPing(t *testing.T) {
	srv, _, _ := start(t, func(cfg *broker.Config) {
		cfg.Engine.Hold = 3 * time.Second // discovery (every 2 s) runs at least once while the ping waits
	})
	ha := mqtttest.Connect(t, srv.MQTTAddr(), "homeassistant", wait)
	ha.Subscribe("homeassistant/#", "edgefence/ha/#")
	ha.Sync()
	tracker := mqtttest.Connect(t, srv.MQTTAddr(), "tracker", wait)
	tracker.Publish("devices/phone/telemetry", 1, []byte(`{"lat":52.52,"lon":13.40,"acc":12.3,"ts":`+ms(time.Now())+`}`))

	const state = "edgefence/ha/device/phone/state"
	var states []string
	got := retained{}
	deadline := time.Now().Add(3*time.Second + wait)
	for len(states) == 0 || states[len(states)-1] != "Museumsinsel" {
		if time.Now().After(deadline) {
			t.Fatalf("phone's states %q, want it to reach Museumsinsel", states)
		}
		select {
		case m := <-ha.Msgs:
			got[m.Topic] = string(m.Payload)
			if m.Topic == state {
				states = append(states, string(m.Payload))
			}
		case <-time.After(100 * time.Millisecond):
		}
	}
	if len(states) != 1 {
		t.Errorf("phone's states %q, want only Museumsinsel: announced before its ping was evaluated", states)
	}
	checkAll(t, got)
	var attrs map[string]any
	if err := json.Unmarshal([]byte(got["edgefence/ha/device/phone/attributes"]), &attrs); err != nil {
		t.Fatal(err)
	}
	if attrs["gps_accuracy"] != 12.3 {
		t.Errorf("gps_accuracy %v, want the ping's acc, 12.3", attrs["gps_accuracy"])
	}
}

func ms(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// A restart with --data-dir keeps a device's entities: the engine restores
// where it was from the retained transitions, so the device is decided
// before it pings again, and discovery announces it at once instead of
// deleting its entities as gone (and re-creating them at its next ping).
func TestRestartKeepsARestoredDevice(t *testing.T) {
	dir := t.TempDir()
	edit := func(cfg *broker.Config) { cfg.DataDir = dir }
	srv, _, _ := start(t, edit)
	const vanCfg = "homeassistant/device_tracker/edgefence/device_van-1/config"
	ha := mqtttest.Connect(t, srv.MQTTAddr(), "homeassistant", wait)
	ha.Subscribe("homeassistant/#", "edgefence/ha/#")
	got := retained{}
	got.take(ha)
	tracker := mqtttest.Connect(t, srv.MQTTAddr(), "tracker", wait)
	tracker.Publish("devices/van-1/telemetry", 1, []byte(`{"lat":52.52,"lon":13.40,"ts":`+ms(time.Now())+`}`))
	got.until(t, ha, "van-1 announced, in the museum", func() bool {
		return got[vanCfg] != "" && got["edgefence/ha/device/van-1/state"] == "Museumsinsel"
	})
	if err := srv.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	srv, _, _ = start(t, edit)
	ha = mqtttest.Connect(t, srv.MQTTAddr(), "homeassistant-2", wait)
	ha.Subscribe("homeassistant/#", "edgefence/ha/#")
	// Past discovery's first update after the restart (at start) and the
	// next one: a fence sensor's state is republished by neither, so wait
	// for a change that only an update publishes.
	got = retained{}
	got.take(ha)
	tracker = mqtttest.Connect(t, srv.MQTTAddr(), "tracker-2", wait)
	tracker.Publish("devices/walker/telemetry", 1, []byte(`{"lat":52.50,"lon":13.30,"ts":`+ms(time.Now())+`}`))
	got.until(t, ha, "an update after the restart (walker announced)", func() bool {
		return got["homeassistant/device_tracker/edgefence/device_walker/config"] != ""
	})
	if v, ok := got[vanCfg]; !ok || v == "" {
		t.Errorf("van-1's entity after the restart: %q (present %v), want kept", v, ok)
	}
	if s := got["edgefence/ha/device/van-1/state"]; s != "Museumsinsel" {
		t.Errorf("van-1's state after the restart: %q, want Museumsinsel", s)
	}
}
