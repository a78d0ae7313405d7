package bridge

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/lorawantest"
)

// A LoRaWAN site: ChirpStack publishes its trackers' uplinks to the
// Mosquitto beside it, and edgefence bridge, in front of that broker,
// publishes back exactly the transitions that happened — 50 devices
// walking into a fence and out, some heard by GPS gateways and some not,
// frames delivered twice via two gateways, heartbeats without a position
// and one retransmitted frame counter that would otherwise have put a
// device back inside.
func TestChirpStackFleetThroughMosquitto(t *testing.T) {
	m := startMosquitto(t)
	cfg := testConfig(t, m.url())
	tf, err := ingest.ParseTelemetryFilter(lorawantest.Filter + "=chirpstack")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Telemetry = []ingest.TelemetryFilter{tf}
	b := startBridge(t, cfg)
	o := observe(t, m.url(), "", "", "geofence/#", "edgefence/rejected/#")
	ns := connectTracker(t, m.addr(), "", "") // the network server's integration
	fleet := lorawantest.ChirpStackFleet(50, time.Now().Add(-time.Minute))
	for _, p := range fleet.Publishes {
		ns.publish(p.Topic, p.Payload)
	}
	eventually(t, "every uplink read", func() bool {
		return strings.Contains(metricsText(t, b), fmt.Sprintf("edgefence_pings_received_total %d\n", len(fleet.Publishes)))
	})
	o.waitTransitions("geofence", len(fleet.Want))
	time.Sleep(3 * cfg.Engine.Hold) // anything more would be a phantom
	if got := lorawanTransitions(t, o); strings.Join(got, "\n") != strings.Join(fleet.Want, "\n") {
		t.Fatalf("transitions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(fleet.Want, "\n"))
	}
	if r := o.messages("edgefence/rejected"); len(r) != 0 {
		t.Fatalf("rejected: %s", r[0].payload)
	}
	text := metricsText(t, b)
	for _, want := range []string{
		fmt.Sprintf("edgefence_uplinks_duplicate_total %d", fleet.Duplicates),
		fmt.Sprintf("edgefence_uplinks_no_position_total %d", fleet.NoPosition),
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// lorawanTransitions returns the transitions received, sorted, as
// "device fence TYPE ts time_source".
func lorawanTransitions(t *testing.T, o *observer) []string {
	t.Helper()
	var out []string
	for _, r := range o.messages("geofence/") {
		var tr struct {
			transition
			TimeSource string `json:"time_source"`
		}
		if err := json.Unmarshal(r.payload, &tr); err != nil {
			t.Fatal(err)
		}
		out = append(out, tr.transition.String()+" "+tr.TimeSource)
	}
	return sorted(out)
}
