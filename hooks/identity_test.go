package hooks

import (
	"log/slog"
	"testing"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/ingest"
)

// On a filter whose body names the device (a LoRaWAN mapping id=deviceName)
// a device could speak for any other, so only the roles that may publish
// for any device may publish there; a device keeps its own topics.
func TestBodyNamedFiltersAreForGatewaysOnly(t *testing.T) {
	users, err := auth.Parse([]byte(aclUsers))
	if err != nil {
		t.Fatal(err)
	}
	tf, err := ingest.ParseTelemetryFilters([]string{"devices/+/telemetry", "lns/+/up=chirpstack,id=deviceName"})
	if err != nil {
		t.Fatal(err)
	}
	h := NewAccess(users, tf, "geofence", "edgefence/late", "edgefence/rejected", slog.Default())
	for _, tc := range []struct {
		user, topic string
		allow       bool
	}{
		{"truck-1", "lns/truck-1/up", false},
		{"truck-1", "devices/truck-1/telemetry", true},
		{"gw", "lns/truck-1/up", true},
		{"ops", "lns/truck-1/up", true},
	} {
		if got := h.OnACLCheck(client(tc.user), tc.topic, true); got != tc.allow {
			t.Errorf("%s may publish %q = %v, want %v", tc.user, tc.topic, got, tc.allow)
		}
	}
}
