package broker

import "testing"

// A subscription is looked up in the retained transitions only when its
// filter can match <prefix>/<fence>/<device>, and a filter starting with a
// wildcard does not match a prefix starting with '$'.
func TestRetainedFilterMatching(t *testing.T) {
	for _, tc := range []struct {
		prefix, filter string
		want           bool
	}{
		{"geofence", "#", true},
		{"geofence", "+/f/d", true},
		{"geofence", "geofence/#", true},
		{"geofence", "geofence/f/+", true},
		{"geofence", "geofence", false},
		{"geofence", "devices/#", false},
		{"geofence", "geo/#", false},
		{"site/geofence", "site/+/f/d", true},
		{"site/geofence", "site/#", true},
		{"site/geofence", "site", false},
		{"site/geofence", "site/other/#", false},
		{"site/geofence", "+", false},
	} {
		h := &retainedHook{prefix: tc.prefix + "/"}
		if got := h.mayMatch(tc.filter); got != tc.want {
			t.Errorf("prefix %q: mayMatch(%q) = %v, want %v", tc.prefix, tc.filter, got, tc.want)
		}
	}

	set := newRetainedSet()
	set.put("$edge/f/d", []byte("x"), 0, 0)
	set.put("geofence/f/d", []byte("y"), 0, 0)
	set.put("geofence/f/old", []byte("z"), 0, 5)
	for filter, want := range map[string]int{"#": 1, "+/f/d": 1, "$edge/#": 1, "geofence/f/+": 1, "geofence/f/d": 1, "geofence/f/old": 0} {
		if got := len(set.match(filter, 10, nil)); got != want {
			t.Errorf("match(%q) found %d, want %d", filter, got, want)
		}
	}
	if gone := set.expire(10); len(gone) != 1 || gone[0] != "geofence/f/old" || set.len() != 2 {
		t.Errorf("expire: %v gone, %d left; want geofence/f/old gone, 2 left", gone, set.len())
	}
}
