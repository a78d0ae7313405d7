package dashboard

import (
	"fmt"
	"testing"

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
