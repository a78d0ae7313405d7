package ingest

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
		if got := Covers(tc.pattern, tc.filter); got != tc.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", tc.pattern, tc.filter, got, tc.want)
		}
	}
	if Unshare("$share/g/devices/+/telemetry") != "devices/+/telemetry" || Unshare("a/b") != "a/b" {
		t.Error("unshare")
	}
}
