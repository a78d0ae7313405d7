package hooks

import "testing"

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		pattern, filter string
		want            bool
	}{
		{"geofence/#", "geofence/#", true},
		{"geofence/#", "geofence/+/truck-1", true},
		{"geofence/#", "geofence", true},
		{"geofence/#", "#", false},
		{"geofence/#", "+/x/y", false},
		{"geofence/#", "geofencex/a", false},
		{"geofence/+/truck-1", "geofence/+/truck-1", true},
		{"geofence/+/truck-1", "geofence/depot/truck-1", true},
		{"geofence/+/truck-1", "geofence/+/+", false},
		{"geofence/+/truck-1", "geofence/#", false},
		{"geofence/+/truck-1", "geofence/depot/truck-2", false},
		{"geofence/+/truck-1", "geofence/depot", false},
		{"geofence/+/truck-1", "geofence/depot/truck-1/x", false},
		{"edgefence/late/#", "edgefence/late/truck-1", true},
		{"edgefence/late/#", "edgefence/rejected/truck-1", false},
		{"#", "$SYS/x", true},
	} {
		if got := covers(tc.pattern, tc.filter); got != tc.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tc.pattern, tc.filter, got, tc.want)
		}
	}
	if unshare("$share/g/devices/+/telemetry") != "devices/+/telemetry" || unshare("a/b") != "a/b" {
		t.Error("unshare")
	}
}
