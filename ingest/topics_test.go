package ingest

import (
	"errors"
	"strings"
	"testing"

	"github.com/edgefence/edgefence/evaluator/payload"
)

func TestTelemetryFilterMatch(t *testing.T) {
	devices, _ := ParseTelemetryFilter("devices/+/telemetry")
	owntracks, _ := ParseTelemetryFilter("owntracks/+/+=owntracks")
	if owntracks.Format != payload.OwnTracks {
		t.Fatalf("format = %v, want owntracks", owntracks.Format)
	}
	for _, tc := range []struct {
		tf    *TelemetryFilter
		topic string
		id    string
		ok    bool
		badID bool
	}{
		{&devices, "devices/truck-42/telemetry", "truck-42", true, false},
		{&devices, "devices/truck-42/status", "", false, false},
		{&devices, "devices/truck-42/telemetry/x", "", false, false},
		{&devices, "devices/truck-42", "", false, false},
		{&devices, "devices//telemetry", "", true, true},
		{&devices, "devices/" + strings.Repeat("x", 129) + "/telemetry", "", true, true},
		{&devices, "devices/" + strings.Repeat("x", 128) + "/telemetry", strings.Repeat("x", 128), true, false},
		{&owntracks, "owntracks/alice/phone", "alice-phone", true, false},
		{&owntracks, "owntracks/alice/", "", true, true},
		{&owntracks, "owntracks/alice", "", false, false},
		{&owntracks, "geofence/alice/phone", "", false, false},
	} {
		id, ok, err := tc.tf.match(tc.topic, true)
		if ok != tc.ok || errors.Is(err, ErrDeviceID) != tc.badID || (!tc.badID && id != tc.id) {
			t.Errorf("%s match %q = %q %v %v; want %q %v bad=%v", tc.tf.Filter, tc.topic, id, ok, err, tc.id, tc.ok, tc.badID)
		}
	}
}

func TestParseTelemetryFilterRejects(t *testing.T) {
	for _, s := range []string{"devices/telemetry", "devices/#", "devices/a+/x", "devices/+/x=xml"} {
		if _, err := ParseTelemetryFilter(s); err == nil {
			t.Errorf("ParseTelemetryFilter(%q) accepted", s)
		}
	}
}
