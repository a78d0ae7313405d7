package sharded

import (
	"strconv"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/inspect"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// A device whose clock runs 3 s ahead, with a hold long enough that its
// pings wait: the view shows the offset it learned, the pings waiting, in
// event order although they came out of order, and a watermark lag of
// about the hold.
func TestInspectShowsClockBufferAndLag(t *testing.T) {
	const hold = 10 * time.Second
	e := newEngine(t, newChanSink(), func(c *engine.Config) { c.Hold = hold })
	// Stamps up to 3 s ahead of the server as they are sent, one
	// arriving after the next.
	start := time.Now()
	first := start.Add(3*time.Second - 400*time.Millisecond)
	for _, i := range []int{0, 1, 3, 2, 4} {
		submit(t, e, "truck-1", outside, first.Add(time.Duration(i)*100*time.Millisecond))
	}
	v, ok, err := e.Inspect("truck-1")
	if err != nil || !ok {
		t.Fatalf("Inspect: %v, %v", ok, err)
	}
	if d := v.ClockOffset - 3*time.Second; d > 0 || d < -time.Second {
		t.Errorf("clock offset %v, want about 3s (at most 3s: transit only makes it smaller)", v.ClockOffset)
	}
	if v.ClockState != "locked" {
		t.Errorf("clock %s after 5 pings, want locked", v.ClockState)
	}
	if v.Buffered != 5 || len(v.Pending) != 5 || v.BufferCap != engine.DefaultBufferCap || v.Hold != hold {
		t.Fatalf("buffered %d (%d listed) of %d, hold %v; want 5 of %d, %v", v.Buffered, len(v.Pending), v.BufferCap, v.Hold, engine.DefaultBufferCap, hold)
	}
	for i, p := range v.Pending {
		want := first.Add(time.Duration(i) * 100 * time.Millisecond)
		if !p.Event.Equal(want) || p.Clamp != clock.ClampNone || p.Ingest.Before(start) {
			t.Errorf("pending[%d] = %+v, want event %v unclamped", i, p, want)
		}
	}
	// The watermark is the highest stamp minus the hold: on the server's
	// clock it trails now by about the hold.
	if d := v.WatermarkLag - hold; d < 0 || d > time.Second {
		t.Errorf("watermark lag %v, want about %v", v.WatermarkLag, hold)
	}
	if v.Evaluated != 0 || v.HasPosition {
		t.Errorf("evaluated %d, position %v: nothing has left the buffer yet", v.Evaluated, v.HasPosition)
	}
}

// After its ENTER, a device's view has the fence it is in since the
// ping's stamp, its committed pings and its position; the fleet view lists
// it with the fence; and looking at a device the engine does not know
// does not create it.
func TestInspectFencesAndFleet(t *testing.T) {
	sink := newChanSink()
	e := newEngine(t, sink, nil)
	stamp := time.Now().Truncate(time.Millisecond)
	submit(t, e, "van-7", inDepot, stamp)
	submit(t, e, "bike-2", outside, stamp)
	if tr := sink.next(t); tr.Device != "van-7" || tr.Type != engine.Enter {
		t.Fatalf("first transition %+v, want van-7's ENTER", tr)
	}
	v, ok, err := e.Inspect("van-7")
	if err != nil || !ok {
		t.Fatalf("Inspect: %v, %v", ok, err)
	}
	if len(v.Fences) != 1 || v.Fences[0].Fence != "depot" || !v.Fences[0].Inside || !v.Fences[0].Since.Equal(stamp) {
		t.Errorf("fences %+v, want depot inside since %v", v.Fences, stamp)
	}
	if len(v.History) != 1 || !v.History[0].Event.Equal(stamp) || v.Evaluated != 1 || !v.HasPosition ||
		v.Lat-inDepot.lat > 1e-5 || v.Lat-inDepot.lat < -1e-5 {
		t.Errorf("history %+v, evaluated %d, position %v,%v", v.History, v.Evaluated, v.Lat, v.Lon)
	}
	if _, ok, _ := e.Inspect("nobody"); ok {
		t.Error("an unknown device has a view")
	}
	seen := map[string][]string{}
	if err := e.Fleet(func(s *inspect.DeviceSummary) { seen[s.Device] = append([]string(nil), s.Inside...) }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || len(seen["van-7"]) != 1 || seen["van-7"][0] != "depot" || len(seen["bike-2"]) != 0 {
		t.Errorf("fleet %v, want van-7 in depot and bike-2 in nothing (and no 'nobody')", seen)
	}
}

// Fleet steps through a shard of more devices than one step holds.
func TestFleetVisitsEveryDevice(t *testing.T) {
	e := newEngine(t, newChanSink(), func(c *engine.Config) { c.Shards = 1 })
	now := time.Now()
	const n = fleetStep*2 + 7
	for i := range n {
		submit(t, e, "dev-"+strconv.Itoa(i), outside, now)
	}
	seen := map[string]bool{}
	if err := e.Fleet(func(s *inspect.DeviceSummary) { seen[s.Device] = true }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Errorf("fleet visited %d devices, want %d", len(seen), n)
	}
}

// BenchmarkFleet is one fleet view of 100,000 devices (4 shards): what a
// page open on the dashboard costs every tick, in steps of fleetStep
// devices a shard (docs/dashboard.md).
func BenchmarkFleet(b *testing.B) {
	cfg := engine.DefaultConfig()
	cfg.Shards = 4
	e, err := New(cfg, mustFences(b, testFences), newChanSink(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	now := time.Now()
	for i := range 100_000 {
		pos := payload.Position{Lat: outside.lat, Lon: outside.lon, TsNs: now.UnixNano(), HasTs: true}
		pg := e.Ping("dev-"+strconv.Itoa(i), &pos, now)
		if err := e.Submit(&pg); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		n := 0
		if err := e.Fleet(func(*inspect.DeviceSummary) { n++ }); err != nil || n != 100_000 {
			b.Fatal(n, err)
		}
	}
}
