package dashboard

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/inspect"
)

// feedFunc hands the hub's handlers to the test.
type feedFunc map[string]func(string, []byte)

func (f feedFunc) Subscribe(filter string, fn func(string, []byte)) (func(), error) {
	f[filter] = fn
	return func() { delete(f, filter) }, nil
}

type noEngine struct{}

func (noEngine) Inspect(string) (inspect.DeviceView, bool, error) {
	return inspect.DeviceView{}, false, nil
}
func (noEngine) Fleet(func(*inspect.DeviceSummary)) error { return nil }
func (noEngine) Fences() *fence.Set                       { return nil }

// A page that stops reading is cut off once viewerQueue events wait for
// it, and nobody else waits for it; the recent transitions stay bounded
// and are found by device; closing unsubscribes.
func TestHubCutsOffASlowPageAndKeepsRecentBounded(t *testing.T) {
	feed := feedFunc{}
	cfg := Config{TransitionPrefix: "geofence", LateTopic: "edgefence/late", RejectTopic: "edgefence/rejected", Tick: DefaultTick}
	h, err := newHub(&cfg, noEngine{}, feed)
	if err != nil {
		t.Fatal(err)
	}
	v := &viewer{ch: make(chan []byte, viewerQueue), gone: make(chan struct{})}
	h.mu.Lock()
	h.viewers[v] = struct{}{}
	h.mu.Unlock()
	tr := feed["geofence/#"]
	for i := range viewerQueue + recentMax {
		dev := fmt.Sprintf("dev-%d", i%3)
		tr("geofence/zone/"+dev, fmt.Appendf(nil, `{"device":%q,"fence":"zone","type":"ENTER","historic":%v}`, dev, i%2 == 0))
	}
	select {
	case <-v.gone:
	default:
		t.Fatal("a page that reads nothing is still served")
	}
	if len(h.recent) != recentMax {
		t.Errorf("%d recent transitions kept, want %d", len(h.recent), recentMax)
	}
	if n := len(h.recentOf("dev-1")); n < recentMax/3-1 || n > recentMax/3+1 {
		t.Errorf("dev-1 has %d recent transitions, want about %d", n, recentMax/3)
	}
	if late, _ := h.lateOf("dev-0"); late == 0 {
		t.Error("dev-0's historic transitions are not counted as late")
	}
	if err := h.close(); err != nil || len(feed) != 0 {
		t.Errorf("close: %v; still subscribed to %v", err, feed)
	}
}

// A device's track keeps its last trackPoints positions, those it was at
// within trackSpan, a position once however long the device stays there,
// and goes with the device.
func TestTracksStayBounded(t *testing.T) {
	h := &hub{}
	start := time.Now()
	for i := range trackPoints + 10 {
		at := start.Add(time.Duration(i) * time.Second)
		h.record([]mapDevice{{ID: "moving", Lat: 52 + float64(i)/1000, Lon: 13}, {ID: "parked", Lat: 52, Lon: 13}}, at)
	}
	if n := len(h.tracks["moving"]); n != trackPoints {
		t.Errorf("moving: %d points, want the last %d", n, trackPoints)
	}
	if got := h.tracks["moving"][trackPoints-1][0]; got != 52+float64(trackPoints+9)/1000 {
		t.Errorf("moving's last point at %v, want its last position", got)
	}
	if n := len(h.tracks["parked"]); n != 1 {
		t.Errorf("parked: %d points, want 1", n)
	}
	// Much later, moving has moved once more: what it left longer than
	// trackSpan ago goes; parked leaves the spot it held all along, which
	// stays; a device no longer on the map loses its track.
	later := start.Add(trackSpan + time.Hour)
	h.record([]mapDevice{{ID: "parked", Lat: 52, Lon: 13}, {ID: "gone", Lat: 1, Lon: 1}}, later.Add(-time.Second))
	h.record([]mapDevice{{ID: "moving", Lat: 53, Lon: 13}, {ID: "parked", Lat: 52.001, Lon: 13}}, later)
	if n := len(h.tracks["moving"]); n != 1 {
		t.Errorf("moving after trackSpan: %d points, want the new one only", n)
	}
	if n := len(h.tracks["parked"]); n != 2 {
		t.Errorf("parked, moving off: %d points, want its spot and the new one", n)
	}
	if _, ok := h.tracks["gone"]; ok {
		t.Error("a device's track outlives it on the map")
	}
	if got := string(h.tracksJSON()); !strings.HasPrefix(got, `{"parked":[[52,13,`) || strings.Contains(got, "moving") {
		t.Errorf("tracks sent as %s, want parked's only (one point is no track)", got)
	}
}
