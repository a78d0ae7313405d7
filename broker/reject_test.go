package broker_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mqtt3 "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgefence/edgefence/internal/mqtttest"
)

// rejectPayload is the documented payload of <reject-topic>/<device>.
type rejectPayload struct {
	Device string `json:"device"`
	Topic  string `json:"topic"`
	Reason string `json:"reason"`
	Error  string `json:"error"`
	Size   int    `json:"size"`
}

// A broken tracker's garbage must not reach subscribers or the engine:
// an MQTT 5 tracker gets PUBACK 0x99 (payload format invalid), operators
// see each refusal on the reject topic and in /metrics, and the broker
// goes on serving everyone else.
func TestBadPayloadsAreRefusedReportedAndNotRouted(t *testing.T) {
	srv := start(t, testConfig(t))
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	raw := connect5(t, srv.MQTTAddr(), "raw-subscriber")
	raw.Subscribe("devices/#")
	ops := connect5(t, srv.MQTTAddr(), "ops")
	ops.Subscribe("edgefence/rejected/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker")

	ts := itoa(nowMs() - 10_000)
	long := strings.Repeat("x", 129)
	cases := []struct {
		name, topic, payload, reason, rejectTopic string
	}{
		{"not JSON", "devices/bad-1/telemetry", `lat=52.52,lon=13.40`, "not_json", "edgefence/rejected/bad-1"},
		{"lat 91", "devices/bad-2/telemetry", `{"lat":91,"lon":13.40,"ts":` + ts + `}`, "lat_range", "edgefence/rejected/bad-2"},
		{"missing lon", "devices/bad-3/telemetry", `{"lat":52.52,"ts":` + ts + `}`, "missing_lon", "edgefence/rejected/bad-3"},
		{"wrong type", "devices/bad-4/telemetry", `{"lat":"52.52","lon":13.40,"ts":` + ts + `}`, "wrong_type", "edgefence/rejected/bad-4"},
		{"wrong type acc", "devices/bad-6/telemetry", `{"lat":52.52,"lon":13.40,"acc":"8","ts":` + ts + `}`, "wrong_type", "edgefence/rejected/bad-6"},
		{"oversize", "devices/bad-5/telemetry", `{"lat":52.52,"lon":13.40,"ts":` + ts + `,"pad":"` + strings.Repeat("p", 5000) + `"}`, "too_large", "edgefence/rejected/bad-5"},
		{"empty device id", "devices//telemetry", `{"lat":52.52,"lon":13.40,"ts":` + ts + `}`, "device_id", "edgefence/rejected"},
		{"device id over 128 bytes", "devices/" + long + "/telemetry", `{"lat":52.52,"lon":13.40,"ts":` + ts + `}`, "device_id", "edgefence/rejected"},
	}
	for _, tc := range cases {
		if rc := tracker.Publish(tc.topic, 1, []byte(tc.payload)); rc != 0x99 {
			t.Errorf("%s: PUBACK reason %#x, want 0x99", tc.name, rc)
		}
	}
	// The tracker's connection still works: a good ping right after.
	tracker.ping("good-1", museumLat, museumLon, nowMs()-10_000)
	expectTransitions(t, dash, "ENTER zone-museumsinsel good-1")

	// Of all that, only the good ping was routed to devices/#.
	tracker.flush()
	routed := raw.Sync()
	if len(routed) != 1 || routed[0].Topic != "devices/good-1/telemetry" {
		var topics []string
		for _, m := range routed {
			topics = append(topics, m.Topic)
		}
		t.Errorf("devices/# subscriber got %q, want only devices/good-1/telemetry", topics)
	}

	// One report per refusal, in order, each naming its reason.
	for _, tc := range cases {
		m := ops.Next("reject report for " + tc.name)
		var r rejectPayload
		if err := json.Unmarshal(m.Payload, &r); err != nil {
			t.Fatalf("%s: reject payload: %v: %s", tc.name, err, m.Payload)
		}
		if m.Topic != tc.rejectTopic || r.Reason != tc.reason || r.Topic != tc.topic || r.Error == "" || r.Size != len(tc.payload) {
			t.Errorf("%s: reject report on %s: %s; want topic %s, reason %s", tc.name, m.Topic, clip(m.Payload), tc.rejectTopic, tc.reason)
		}
		// A wrong_type says which field: the sender cannot guess it.
		if field := map[string]string{"wrong type": `"lat"`, "wrong type acc": `"acc"`}[tc.name]; !strings.Contains(r.Error, field) {
			t.Errorf("%s: reject message %q does not name the field %s", tc.name, r.Error, field)
		}
	}

	want := map[string]float64{}
	for _, tc := range cases {
		want[tc.reason]++
	}
	ms := metrics(t, srv)
	for reason, n := range want {
		if got := ms[`edgefence_rejected_total{reason="`+reason+`"}`]; got != n {
			t.Errorf(`edgefence_rejected_total{reason=%q} = %v, want %v`, reason, got, n)
		}
	}
	if got := ms["edgefence_pings_received_total"]; got != float64(len(cases)+1) {
		t.Errorf("edgefence_pings_received_total = %v, want %d", got, len(cases)+1)
	}
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// connect3 connects an MQTT 3.1.1 client (paho.mqtt.golang), disconnected
// when the test ends.
func connect3(t *testing.T, addr, name string) mqtt3.Client {
	t.Helper()
	opts := mqtt3.NewClientOptions().
		AddBroker("tcp://" + addr).
		SetClientID(mqtttest.ID(name)).
		SetProtocolVersion(4).
		SetCleanSession(true).
		SetAutoReconnect(false).
		SetConnectRetry(false).
		SetConnectTimeout(wait).
		SetWriteTimeout(wait)
	c := mqtt3.NewClient(opts)
	if tok := c.Connect(); !tok.WaitTimeout(wait) || tok.Error() != nil {
		t.Fatalf("MQTT 3.1.1 connect: %v", tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	return c
}

func publish3(t *testing.T, c mqtt3.Client, topic string, qos byte, payload []byte) {
	t.Helper()
	tok := c.Publish(topic, qos, false, payload)
	if !tok.WaitTimeout(wait) {
		t.Fatalf("MQTT 3.1.1 publish on %s (QoS %d): not acknowledged within %v", topic, qos, wait)
	}
	if err := tok.Error(); err != nil {
		t.Fatalf("MQTT 3.1.1 publish on %s: %v", topic, err)
	}
}

// Most deployed trackers speak MQTT 3.1.1. Their pings work at QoS 1 and
// QoS 0; a bad one is acknowledged (3.1.1 has no reason codes) but not
// routed, and the tracker stays connected.
func TestMQTT311TrackerAtQoS1AndQoS0(t *testing.T) {
	srv := start(t, testConfig(t))
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	raw := connect5(t, srv.MQTTAddr(), "raw-subscriber")
	raw.Subscribe("devices/#")
	tracker := connect3(t, srv.MQTTAddr(), "tracker-311")

	t0 := nowMs() - 10_000
	publish3(t, tracker, "devices/old-q1/telemetry", 1, canonical(museumLat, museumLon, t0))
	expectTransitions(t, dash, "ENTER zone-museumsinsel old-q1")
	publish3(t, tracker, "devices/old-q0/telemetry", 0, canonical(alexLat, alexLon, t0))
	expectTransitions(t, dash, "ENTER customer-alex old-q0")

	publish3(t, tracker, "devices/old-q1/telemetry", 1, []byte(`{"lat":52.52`))
	publish3(t, tracker, "devices/old-q0/telemetry", 0, []byte(`not json`))
	if !tracker.IsConnectionOpen() {
		t.Fatal("tracker disconnected after a bad payload")
	}
	publish3(t, tracker, "devices/old-q1/telemetry", 1, canonical(outLat, outLon, t0+1000))
	expectTransitions(t, dash, "EXIT zone-museumsinsel old-q1")

	// A subscriber that itself speaks 3.1.1 gets the transitions too.
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	listener := connect3(t, srv.MQTTAddr(), "listener-311")
	tok := listener.Subscribe("geofence/+/old-q0", 1, func(_ mqtt3.Client, m mqtt3.Message) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, m.Topic())
		if len(got) == 1 {
			close(done)
		}
	})
	if !tok.WaitTimeout(wait) || tok.Error() != nil {
		t.Fatalf("3.1.1 subscribe: %v", tok.Error())
	}
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("3.1.1 subscriber got no retained transition")
	}

	publish3(t, tracker, "edgefence-test/flush", 1, nil) // see client5.flush
	routed := raw.Sync()
	var topics []string
	for _, m := range routed {
		topics = append(topics, m.Topic+" "+clip(m.Payload))
	}
	if len(routed) != 3 {
		t.Errorf("devices/# subscriber got %q, want the three valid pings only", topics)
	}
	if v := metric(t, srv, `edgefence_rejected_total{reason="not_json"}`); v != 2 {
		t.Errorf(`edgefence_rejected_total{reason="not_json"} = %v, want 2`, v)
	}
}

// heavyFence writes a fence whose every lookup walks a ring of n vertices
// around the museum point, making the engine's single shard slow enough
// for its one-slot queue to fill under a publish flood.
func heavyFence(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"heavy","geometry":{"type":"Polygon","coordinates":[[`)
	// A star: alternating radii, so no simplification could shorten it.
	for i := 0; i <= n; i++ {
		a := 2 * math.Pi * float64(i%n) / float64(n)
		r := 0.01
		if i%2 == 1 {
			r = 0.009
		}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "[%.7f,%.7f]", museumLon+r*math.Cos(a), museumLat+r*math.Sin(a))
	}
	b.WriteString(`]]}}]}`)
	path := filepath.Join(t.TempDir(), "heavy.geojson")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// When the engine falls behind, an MQTT 5 QoS 1 tracker is told so with
// PUBACK 0x97 (quota exceeded) and retries later; nothing is silently
// lost, and /metrics counts every refusal.
func TestFullEngineQueueRefusesWithQuotaExceeded(t *testing.T) {
	cfg := testConfig(t)
	cfg.Fences = heavyFence(t, 80_000)
	cfg.Engine.Queue = 1
	cfg.Engine.Shards = 1
	cfg.Engine.Hold = 0 // evaluate on arrival: every ping walks the heavy fence
	// No rate limit: the queue may take more than a burst (100) to fill,
	// and then the rate limit's 0x97 would come first.
	cfg.PublishRate = 0
	srv := start(t, cfg)

	// Several connections: a client goroutine evaluates its ping itself
	// when the shard is free, so the queue fills only while one client's
	// goroutine owns the shard and others bring pings.
	const limit = 20_000
	var sent, refused, other atomic.Int64
	var wg sync.WaitGroup
	t0 := nowMs() - 60_000
	for w := range 8 {
		tracker := connect5(t, srv.MQTTAddr(), fmt.Sprintf("flood-%d", w))
		wg.Go(func() {
			for refused.Load() == 0 {
				i := sent.Add(1)
				if i > limit {
					return
				}
				dev := fmt.Sprintf("flood-%d", w)
				switch rc := tracker.Publish("devices/"+dev+"/telemetry", 1, canonical(museumLat, museumLon, t0+i)); rc {
				case 0:
				case 0x97:
					refused.Add(1)
				default:
					other.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if other.Load() != 0 {
		t.Errorf("%d publishes got a reason code other than success or 0x97", other.Load())
	}
	if refused.Load() == 0 {
		t.Fatalf("no PUBACK 0x97 in %d publishes to a one-slot queue", min(sent.Load(), limit))
	}
	t.Logf("first 0x97 after about %d publishes; %d refused", sent.Load(), refused.Load())
	if v := metric(t, srv, `edgefence_refused_total{reason="queue_full"}`); v != float64(refused.Load()) {
		t.Errorf(`edgefence_refused_total{reason="queue_full"} = %v, want the %d refusals seen`, v, refused.Load())
	}
	if v := metric(t, srv, `edgefence_shed_total{stage="queue"}`); v != 0 {
		t.Errorf(`edgefence_shed_total{stage="queue"} = %v: QoS 1 pings must be refused, not shed`, v)
	}
}

// MQTT 5 allows QoS 2, though trackers are documented at 0 and 1. A bad
// payload at QoS 2 must still complete the QoS 2 handshake (a reason code
// would go out as a PUBACK, which breaks the client's flow), is not
// routed, and is reported; a good one works.
func TestMQTT5QoS2TrackerIsNotBrokenByARejection(t *testing.T) {
	srv := start(t, testConfig(t))
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	raw := connect5(t, srv.MQTTAddr(), "raw-subscriber")
	raw.Subscribe("devices/#")
	ops := connect5(t, srv.MQTTAddr(), "ops")
	ops.Subscribe("edgefence/rejected/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker-qos2")

	if rc := tracker.Publish("devices/q2/telemetry", 2, []byte(`{"lat":91,"lon":13.4}`)); rc >= 0x80 {
		t.Errorf("bad payload at QoS 2: reason %#x, want the handshake to complete", rc)
	}
	m := ops.Next("reject report")
	if m.Topic != "edgefence/rejected/q2" || !strings.Contains(string(m.Payload), `"reason":"lat_range"`) {
		t.Errorf("reject report %s %s", m.Topic, m.Payload)
	}
	if rc := tracker.Publish("devices/q2/telemetry", 2, canonical(museumLat, museumLon, nowMs()-5000)); rc >= 0x80 {
		t.Fatalf("good payload at QoS 2: reason %#x", rc)
	}
	expectTransitions(t, dash, "ENTER zone-museumsinsel q2")
	tracker.flush()
	if routed := raw.Sync(); len(routed) != 1 || !strings.Contains(string(routed[0].Payload), "13.4") || strings.Contains(string(routed[0].Payload), `"lat":91`) {
		t.Errorf("devices/# got %d messages, want only the good ping", len(routed))
	}
}
