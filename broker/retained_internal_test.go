package broker

import (
	"testing"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/ingest"
)

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
		h := newRetainedHook(nil, nil, nil, tc.prefix, metrics.NewSet())
		if got := ingest.Overlaps(tc.filter, h.under); got != tc.want {
			t.Errorf("prefix %q: %q overlaps %q = %v, want %v", tc.prefix, tc.filter, h.under, got, tc.want)
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

// A client's deliveries waiting for acknowledgements hold at most
// maxWaitingRetained messages; what a SUBSCRIBE would add past that is
// counted as shed, not held.
func TestWaitingRetainedIsBounded(t *testing.T) {
	h := newRetainedHook(newRetainedSet(), nil, nil, "geofence", metrics.NewSet())
	close(h.stop) // no goroutine: this looks at the bookkeeping only
	cl := &mqtt.Client{}
	owe := func(n int) *delivery {
		return &delivery{cl: cl, msgs: make([]*retainedMsg, n), ends: []int{n}, subs: make([]packets.Subscription, 1)}
	}
	h.wait(owe(maxWaitingRetained - 10))
	h.wait(owe(10))
	h.wait(owe(1))
	v, _ := h.waits.Load(cl)
	w := v.(*waiting)
	if w.held != maxWaitingRetained || len(w.list) != 2 || h.failed.Get() != 1 {
		t.Fatalf("held %d in %d deliveries, %d shed; want %d in 2, 1 shed", w.held, len(w.list), h.failed.Get(), maxWaitingRetained)
	}
}
