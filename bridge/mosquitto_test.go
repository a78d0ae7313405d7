package bridge

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// The contract of serve, over a bridge to a real Mosquitto: transitions
// retained on <prefix>/<fence>/<device> (EXIT with an expiry), late pings
// and rejects on their topics with serve's payloads, bad payloads never
// stopping the bridge, and the HTTP endpoints.
func TestMosquittoEndToEnd(t *testing.T) {
	m := startMosquitto(t)
	cfg := testConfig(t, m.url())
	// Late pings straight to the late topic: what this test guards is the
	// bridge's late output (reconciling them is the engine's, tested there).
	cfg.Engine.History = 0
	b := startBridge(t, cfg)
	o := observe(t, m.url(), "", "", "geofence/#", "edgefence/late/#", "edgefence/rejected/#")
	tr := connectTracker(t, m.addr(), "", "")
	base := time.Now().UnixMilli() - 60_000

	tr.ping("truck-1", museumLat, museumLon, base+1000)
	got := o.waitTransitions("geofence", 1)
	if want := fmt.Sprintf("truck-1 zone-museumsinsel ENTER %d", base+1000); got[0] != want {
		t.Fatalf("first transition %q, want %q", got[0], want)
	}
	enter := o.messages("geofence/")[0]
	if enter.topic != "geofence/zone-museumsinsel/truck-1" || !enter.retain || enter.expiry != nil {
		t.Errorf("ENTER on %s retain %v expiry %v: want geofence/zone-museumsinsel/truck-1, retained, no expiry", enter.topic, enter.retain, enter.expiry)
	}
	var payload map[string]any
	if err := json.Unmarshal(enter.payload, &payload); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"device", "fence", "type", "event_time", "ts", "lat", "lon", "clamped", "ingest_time", "decided_time"} {
		if _, ok := payload[k]; !ok {
			t.Errorf("transition payload has no %q: %s", k, enter.payload)
		}
	}

	tr.ping("truck-1", outLat, outLon, base+2000)
	o.waitTransitions("geofence", 2)
	exit := o.messages("geofence/")[1]
	if !exit.retain || exit.expiry == nil || *exit.expiry == 0 || *exit.expiry > 24*3600 {
		t.Errorf("EXIT retain %v expiry %v: want retained with an expiry of at most 24h", exit.retain, exit.expiry)
	}

	// Behind the watermark: late, on the late topic, never a transition.
	tr.ping("truck-1", museumLat, museumLon, base+500)
	eventually(t, "the late ping", func() bool { return len(o.messages("edgefence/late/")) == 1 })
	late := o.messages("edgefence/late/")[0]
	if late.topic != "edgefence/late/truck-1" || !strings.Contains(string(late.payload), `"reason":"behind_watermark"`) {
		t.Errorf("late report on %s: %s", late.topic, late.payload)
	}

	// Bad payloads are rejected and reported; none stops the bridge.
	tr.publish("devices/truck-2/telemetry", []byte("not json"))
	tr.publish("devices/truck-2/telemetry", []byte(`{"lat":91,"lon":13.4,"ts":1}`))
	tr.publish("devices/"+strings.Repeat("x", 129)+"/telemetry", canonical(museumLat, museumLon, base))
	tr.publish("owntracks/alice/phone", []byte(`{"_type":"waypoint","desc":"home"}`)) // routed, not evaluated
	eventually(t, "three rejects", func() bool { return len(o.messages("edgefence/rejected")) == 3 })
	// Reports of different devices go out concurrently: compare as a set.
	var rejects []string
	for _, r := range o.messages("edgefence/rejected") {
		var rep struct{ Reason string }
		if err := json.Unmarshal(r.payload, &rep); err != nil {
			t.Fatal(err)
		}
		rejects = append(rejects, r.topic+" "+rep.Reason)
	}
	if want := []string{"edgefence/rejected device_id", "edgefence/rejected/truck-2 lat_range", "edgefence/rejected/truck-2 not_json"}; !slices.Equal(sorted(rejects), want) {
		t.Errorf("rejects %q, want %q", sorted(rejects), want)
	}
	tr.ping("truck-2", museumLat, museumLon, base+3000)
	got = o.waitTransitions("geofence", 3)
	if want := fmt.Sprintf("truck-2 zone-museumsinsel ENTER %d", base+3000); got[2] != want {
		t.Errorf("after the bad payloads: %q, want %q", got[2], want)
	}

	// The HTTP endpoints and serve's metrics.
	for path, code := range map[string]int{"/healthz": 200, "/readyz": 200, "/debug/pprof/": 404} {
		if got := httpGet(t, b, path).StatusCode; got != code {
			t.Errorf("GET %s: %d, want %d", path, got, code)
		}
	}
	metrics := metricsText(t, b)
	for _, want := range []string{
		`edgefence_pings_received_total 8`,
		`edgefence_pings_ignored_total 1`,
		`edgefence_rejected_total{reason="not_json"} 1`,
		`edgefence_rejected_total{reason="lat_range"} 1`,
		`edgefence_rejected_total{reason="device_id"} 1`,
		`edgefence_late_total 1`,
		`edgefence_transitions_total{type="ENTER"} 2`,
		`edgefence_transitions_total{type="EXIT"} 1`,
		`edgefence_bridge_connected 1`,
		`edgefence_bridge_queued_transitions 0`,
		`edgefence_publish_latency_seconds_bucket`,
	} {
		if !strings.Contains(metrics, want+"\n") && !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func httpGet(t *testing.T, b *Bridge, path string) *http.Response {
	t.Helper()
	resp, err := http.Get("http://" + b.HTTPAddr() + path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func metricsText(t *testing.T, b *Bridge) string {
	t.Helper()
	resp, err := http.Get("http://" + b.HTTPAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}
