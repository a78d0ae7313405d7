package broker_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/lorawantest"
)

// ChirpStack's MQTT integration pointed straight at edgefence serve: 50
// trackers walking into a fence and out, some heard by GPS gateways and
// some not, frames delivered twice via two gateways, heartbeats and one
// retransmitted frame counter. The dashboard sees exactly the true
// transitions, each saying which clock stamped it.
func TestChirpStackFleetIntoServe(t *testing.T) {
	cfg := testConfig(t)
	tf, err := ingest.ParseTelemetryFilter(lorawantest.Filter + "=chirpstack")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Telemetry = append(cfg.Telemetry, tf)
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#", "edgefence/rejected/#")
	ns := connect5(t, srv.MQTTAddr(), "chirpstack")
	fleet := lorawantest.ChirpStackFleet(50, time.Now().Add(-time.Minute))
	for _, p := range fleet.Publishes {
		if rc := ns.Publish(p.Topic, 1, p.Payload); rc >= 0x80 {
			t.Fatalf("publish %s: PUBACK %#x", p.Topic, rc)
		}
	}
	var got []string
	for range fleet.Want {
		m := dash.Next("a transition")
		var tr struct {
			Device, Fence, Type string
			Ts                  int64
			TimeSource          string `json:"time_source"`
		}
		if err := json.Unmarshal(m.Payload, &tr); err != nil || !strings.HasPrefix(m.Topic, "geofence/") {
			t.Fatalf("%s: %s (%v)", m.Topic, m.Payload, err)
		}
		got = append(got, fmt.Sprintf("%s %s %s %d %s", tr.Device, tr.Fence, tr.Type, tr.Ts, tr.TimeSource))
	}
	time.Sleep(3 * cfg.Engine.Hold) // anything more would be a phantom
	if more := dash.Sync(); len(more) != 0 {
		t.Fatalf("more than the true transitions: %s %s", more[0].Topic, more[0].Payload)
	}
	slices.Sort(got)
	if strings.Join(got, "\n") != strings.Join(fleet.Want, "\n") {
		t.Fatalf("transitions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(fleet.Want, "\n"))
	}
	for series, want := range map[string]float64{
		"edgefence_uplinks_duplicate_total":   float64(fleet.Duplicates),
		"edgefence_uplinks_no_position_total": float64(fleet.NoPosition),
		"edgefence_pings_received_total":      float64(len(fleet.Publishes)),
	} {
		if got := metric(t, srv, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}
