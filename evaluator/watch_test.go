package evaluator

import (
	"strconv"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/inspect"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// A watched device keeps its last inspect.Ring arrivals in arrival order,
// each with its clamp reason; a device nobody inspected keeps none; at
// most inspect.MaxWatched devices are watched, the least recently looked at
// giving way; a watch lapses inspect.WatchFor after the last look.
func TestWatchKeepsTheLastArrivalsOfInspectedDevices(t *testing.T) {
	set := mustFences(t, testFences)
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	cfg := engine.DefaultConfig()
	proc, err := NewProcessor(cfg, base, func() *fence.Set { return set }, &countSink{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := base
	ping := func(id string, stamped bool) {
		at = at.Add(100 * time.Millisecond)
		pos := payload.Position{Lat: inDepot.lat, Lon: inDepot.lon, TsNs: at.UnixNano(), HasTs: stamped}
		pg := engine.NewPing(cfg.Clamper(), id, &pos, at)
		proc.Ingest(&pg)
	}
	ping("a", true)
	ping("b", true)
	if v, _ := proc.Inspect("a", at); len(v.Received) != 0 {
		t.Fatalf("first look: %d received, want none", len(v.Received))
	}
	for i := range inspect.Ring + 5 {
		ping("a", i%2 == 0)
		ping("b", true)
	}
	v, _ := proc.Inspect("a", at)
	if len(v.Received) != inspect.Ring {
		t.Fatalf("%d received, want the last %d", len(v.Received), inspect.Ring)
	}
	for i := 1; i < len(v.Received); i++ {
		if !v.Received[i].Ingest.After(v.Received[i-1].Ingest) {
			t.Fatalf("received[%d] arrived at %v, not after received[%d]", i, v.Received[i].Ingest, i-1)
		}
	}
	if last := v.Received[len(v.Received)-1]; last.Clamp != clock.ClampNone || !last.Stamp.Equal(at.Add(-100*time.Millisecond)) {
		t.Errorf("last received %+v, want a's last ping, stamped as sent", last)
	}
	if prev := v.Received[len(v.Received)-2]; prev.Clamp != clock.ClampMissing || !prev.Stamp.IsZero() {
		t.Errorf("one before the last %+v, want clamped: missing, no stamp", prev)
	}
	if proc.watched.Watched(proc.devices["b"]) {
		t.Errorf("b, never inspected, is watched")
	}

	// More devices looked at than inspect.MaxWatched: a, looked at first, gives way.
	for i := range inspect.MaxWatched {
		id := "w" + strconv.Itoa(i)
		ping(id, true)
		proc.Inspect(id, at)
	}
	if proc.watched.Len() != inspect.MaxWatched || proc.watched.Watched(proc.devices["a"]) {
		t.Errorf("%d watched (a among them: %v), want %d without a", proc.watched.Len(), proc.watched.Watched(proc.devices["a"]), inspect.MaxWatched)
	}

	// A watch lapses after inspect.WatchFor without a look.
	at = at.Add(inspect.WatchFor + time.Second)
	ping("w0", true)
	if proc.watched.Watched(proc.devices["w0"]) {
		t.Errorf("w0 still watched %v after its last look", inspect.WatchFor)
	}
}
