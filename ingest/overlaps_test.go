package ingest

import "testing"

func TestOverlaps(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"devices/+/telemetry", "devices/+/telemetry", true},
		{"devices/+/telemetry", "devices/truck-1/telemetry", true},
		{"devices/+/telemetry", "devices/#", true},
		{"devices/+/telemetry", "#", true},
		{"devices/+/telemetry", "+/+/+", true},
		{"devices/+/telemetry", "+/truck-1/#", true},
		{"devices/+/telemetry", "devices/+/telemetry/#", true}, // "x/#" matches "x" too
		{"devices/+/telemetry", "devices/+", false},
		{"devices/+/telemetry", "devices/+/status", false},
		{"devices/+/telemetry", "geofence/#", false},
		{"devices/+/telemetry", "devices/+/telemetry/extra", false},
		{"devices/+/telemetry", "+/+", false},
		{"owntracks/+/+", "owntracks/alice/#", true},
		{"owntracks/+/+", "owntracks/alice", false},
		{"owntracks/+/+", "owntracks/#", true},
		{"a/b", "a/b/#", true},
		{"a", "a/#", true},
		{"a/b", "a/+/#", true},
	} {
		if got := Overlaps(tc.a, tc.b); got != tc.want {
			t.Errorf("Overlaps(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := Overlaps(tc.b, tc.a); got != tc.want {
			t.Errorf("Overlaps(%q, %q) = %v, want %v (not symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

// A filter overlaps a telemetry filter exactly when some concrete topic
// matches both: checked against Matches() on a set of topics.
func TestOverlapsAgreesWithMatching(t *testing.T) {
	topics := []string{"devices/t1/telemetry", "devices/t2/telemetry", "devices/t1", "devices", "devices/t1/telemetry/x",
		"owntracks/alice/phone", "geofence/z/t1", "a", "a/b", "a/b/c"}
	filters := []string{"#", "+", "+/+", "+/+/+", "devices/#", "devices/+", "devices/+/telemetry", "devices/t1/#",
		"devices/t1/+", "owntracks/+/+", "geofence/#", "a/#", "a/+", "a/b", "+/b/#", "devices/+/telemetry/#"}
	for _, a := range filters {
		for _, b := range filters {
			both := false
			for _, tp := range topics {
				if Matches(a, tp) && Matches(b, tp) {
					both = true
				}
			}
			// The topic list is not exhaustive, so only one direction is
			// a proof: a shared topic means they must overlap.
			if both && !Overlaps(a, b) {
				t.Errorf("Overlaps(%q, %q) = false, but both match a topic", a, b)
			}
		}
	}
}
