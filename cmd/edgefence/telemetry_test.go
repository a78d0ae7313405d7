package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/worker/subjects"
)

// filterStrings parses args with --telemetry-topic and
// --telemetry-topic-replace and returns the filters in effect, each as
// "FILTER=format".
func filterStrings(t *testing.T, args ...string) ([]string, error) {
	t.Helper()
	topics := ingest.NewTopicFlags()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	topics.Register(fs, "telemetry topic")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	tf, err := topics.Filters()
	var out []string
	for _, f := range tf {
		out = append(out, f.Filter+"="+f.Format.String())
	}
	return out, err
}

// --telemetry-topic adds to the defaults; a default's filter given again
// takes its place; --telemetry-topic-replace keeps only those given.
func TestTelemetryTopicAddsToTheDefaults(t *testing.T) {
	defaults := []string{"devices/+/telemetry=auto", "owntracks/+/+=auto",
		"application/+/device/+/event/up=chirpstack", "v3/+/devices/+/up=ttn"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, defaults},
		{[]string{"--telemetry-topic", "fleet/+/pos"}, append(slices.Clone(defaults), "fleet/+/pos=auto")},
		{[]string{"--telemetry-topic", "devices/+/telemetry=canonical"},
			append([]string{"devices/+/telemetry=canonical"}, defaults[1:]...)},
		{[]string{"--telemetry-topic", "application/+/device/+/event/up=chirpstack,lat=gps.lat,lon=gps.lng"}, defaults},
		{[]string{"--telemetry-topic", "fleet/+/pos", "--telemetry-topic-replace"}, []string{"fleet/+/pos=auto"}},
	} {
		got, err := filterStrings(t, tc.args...)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%v: %v, %v; want %v", tc.args, got, err, tc.want)
		}
	}
	if _, err := filterStrings(t, "--telemetry-topic-replace"); err == nil {
		t.Error("--telemetry-topic-replace alone: no error")
	}
	if _, err := filterStrings(t, "--telemetry-topic", "$share/g/devices/+/telemetry"); err == nil {
		t.Error("a shared subscription beside the unshared defaults: no error")
	}
	if got, err := filterStrings(t, "--telemetry-topic", "$share/g/devices/+/telemetry", "--telemetry-topic-replace"); err != nil || len(got) != 1 {
		t.Errorf("a shared subscription replacing the defaults: %v, %v", got, err)
	}
	// serve's and bridge's defaults are the worker's.
	if !slices.Equal(ingest.DefaultTelemetryFilters, subjects.DefaultTelemetryFilters) {
		t.Errorf("serve's default topics %v, the worker's %v", ingest.DefaultTelemetryFilters, subjects.DefaultTelemetryFilters)
	}
}

// The docs' example adds a network server's topic: the trackers on the
// default topic are still evaluated, and so is a ChirpStack uplink on
// serve's defaults.
func TestAddedTelemetryTopicKeepsTheDefaultsEvaluated(t *testing.T) {
	p := startServe(t, t.TempDir(), nil, "--telemetry-topic", "fleet/+/pos", "--hold", "0")
	dash := connect(t, p.mqtt, "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect(t, p.mqtt, "tracker")
	t0 := time.Now().UnixMilli() - 5000
	tracker.ping("canonical-1", museumLat, museumLon, t0)
	if tr := decode(t, "geofence", dash.Next("ENTER on the default topic")); tr.Device != "canonical-1" || tr.Type != "ENTER" {
		t.Fatalf("got %s", tr)
	}
	tracker.publish("fleet/added-1/pos", fmt.Appendf(nil, `{"lat":%v,"lon":%v,"ts":%d}`, museumLat, museumLon, t0))
	if tr := decode(t, "geofence", dash.Next("ENTER on the added topic")); tr.Device != "added-1" || tr.Type != "ENTER" {
		t.Fatalf("got %s", tr)
	}
	at := time.UnixMilli(t0).UTC().Format(time.RFC3339Nano)
	tracker.publish("application/app/device/0202020202020202/event/up", fmt.Appendf(nil,
		`{"time":%q,"deviceInfo":{"devEui":"0202020202020202"},"object":{"latitude":%v,"longitude":%v},"rxInfo":[{"gatewayId":"0016c001f153a14c","nsTime":%q}]}`,
		at, museumLat, museumLon, at))
	if tr := decode(t, "geofence", dash.Next("ENTER of the ChirpStack uplink")); tr.Device != "0202020202020202" || tr.Type != "ENTER" {
		t.Fatalf("got %s", tr)
	}
}
