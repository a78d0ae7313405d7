package ingest

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"pgregory.net/rapid"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/evaluator/sharded"
)

// pingLog keeps the pings a real engine (one shard, no fences) took, as
// the reader's tap hands them over.
type pingLog struct {
	mu    sync.Mutex
	pings []engine.Ping
}

func (l *pingLog) take(p engine.Ping) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pings = append(l.pings, p)
}

type discard struct{}

func (discard) Transition(*engine.Transition) {}
func (discard) Late(*engine.Late)             {}

// newEngine is a real engine with cfg's settings and fences, its
// transitions given to sink, closed when the test ends.
func newEngine(t interface {
	Helper()
	Fatal(...any)
	Cleanup(func())
}, cfg engine.Config, fences string, sink engine.Sink) *sharded.Engine {
	t.Helper()
	set, err := fence.Parse([]byte(`{"type":"FeatureCollection","features":[` + fences + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := sharded.New(cfg, set, sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return eng
}

type rejectLog struct{ topics []string }

func (r *rejectLog) Rejected(device, topic, reason, message string, body []byte) {
	r.topics = append(r.topics, device+" "+reason)
}

func newLoRaReader(t interface {
	Helper()
	Fatal(...any)
	Cleanup(func())
}, filters ...string) (*Reader, *pingLog, *rejectLog) {
	t.Helper()
	cfg := engine.DefaultConfig()
	// One goroutine brings every ping, so the shard's queue stays empty;
	// at its default (32,768 pings, 3.6 MB) the fuzz target, which makes
	// a reader for each input, allocated faster than the collector gave
	// back, and its worker was killed for want of memory at 12.8 GB.
	cfg.Shards, cfg.Queue = 1, 16
	return newReader(t, newEngine(t, cfg, "", discard{}), filters...)
}

// newReader is a reader of filters in front of eng that keeps the pings
// the engine took and the rejects.
func newReader(t interface {
	Helper()
	Fatal(...any)
}, eng *sharded.Engine, filters ...string) (*Reader, *pingLog, *rejectLog) {
	t.Helper()
	tfs, err := ParseTelemetryFilters(filters)
	if err != nil {
		t.Fatal(err)
	}
	took, rej := &pingLog{}, &rejectLog{}
	r := NewReader(tfs, eng, rej, NewMetrics(metrics.NewSet()), slog.New(slog.NewTextHandler(io.Discard, nil)), 0)
	r.Tap(took.take)
	return r, took, rej
}

// uplink is a ChirpStack v4 event/up of device eui, frame fcnt, heard by
// gateways with the given GPS times (zero: a gateway without GPS).
func uplink(eui string, fcnt uint32, lat, lon float64, gps ...time.Time) []byte {
	var rx []map[string]any
	for i, at := range gps {
		g := map[string]any{"gatewayId": fmt.Sprintf("gw%d", i), "rssi": -50}
		if !at.IsZero() {
			g["gwTime"] = at.Format(time.RFC3339Nano)
		}
		rx = append(rx, g)
	}
	b, _ := json.Marshal(map[string]any{
		"time":       time.Now().UTC().Format(time.RFC3339Nano),
		"deviceInfo": map[string]any{"devEui": eui, "deviceName": "name-" + eui, "applicationId": "app"},
		"devAddr":    "00189440", "fCnt": fcnt, "fPort": 2,
		"object": map[string]any{"latitude": lat, "longitude": lon},
		"rxInfo": rx,
	})
	return b
}

func TestParseLoRaWANFilters(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		format  payload.Format
		mapping string
	}{
		{[]string{"application/+/device/+/event/up=chirpstack"}, payload.ChirpStack, ""},
		{[]string{"v3/+/devices/+/up=ttn,id=dev_eui"}, payload.TTN, "id=dev_eui"},
		{[]string{"application/+/device/+/event/up=chirpstack,lat=gps.lat,lon=gps.lng"}, payload.ChirpStack, "lat=gps.lat,lon=gps.lng"},
		// An environment variable's list splits at every comma.
		{[]string{"application/+/device/+/event/up=chirpstack", "lat=gps.lat", "lon=gps.lng", "acc=gps.hdop"}, payload.ChirpStack, "lat=gps.lat,lon=gps.lng,acc=gps.hdop"},
	} {
		tfs, err := ParseTelemetryFilters(tc.in)
		if err != nil || len(tfs) != 1 {
			t.Fatalf("%q: %v %v", tc.in, tfs, err)
		}
		if tfs[0].Format != tc.format || tfs[0].Mapping.String() != tc.mapping {
			t.Errorf("%q: format %v mapping %q", tc.in, tfs[0].Format, tfs[0].Mapping.String())
		}
	}
	for _, bad := range []string{
		"devices/+/telemetry=canonical,lat=a.b",                  // a mapping needs a LoRaWAN format
		"application/+/device/+/event/up=chirpstack,lat=gps.lat", // lat without lon
		"application/+/device/+/event/up=chirpstack,id=device_id",
		"application/+/device/+/event/up=chirpstack,alt=x",
		"application/+/device/+/event/up=lora",
	} {
		if _, err := ParseTelemetryFilter(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// The documented uplinks of both servers through the reader, and what
// the reader makes of uplinks that are not one ping each.
func TestReaderUplinks(t *testing.T) {
	r, eng, rej := newLoRaReader(t, "application/+/device/+/event/up=chirpstack", "v3/+/devices/+/up=ttn", "devices/+/telemetry")
	m := r.Metrics()
	fixture := func(name string) []byte {
		b, err := os.ReadFile("../evaluator/payload/lorawan/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	read := func(topic string, body []byte) (string, Outcome) {
		id, pos, at, out := r.Read(topic, body, "ns")
		if out == Accepted {
			r.Submit(1, true, &pos, id, at)
		}
		return id, out
	}
	cs := fixture("chirpstack-v4-up.json")
	if id, out := read("application/17c82e96/device/0101010101010101/event/up", cs); out != Accepted || id != "0101010101010101" {
		t.Fatalf("chirpstack: %q %v", id, out)
	}
	// The same frame again (a second gateway's copy, a redelivery): no ping.
	if _, out := read("application/17c82e96/device/0101010101010101/event/up", cs); out != Ignored || m.Duplicate.Get() != 1 {
		t.Fatalf("duplicate: %v, %d duplicates", out, m.Duplicate.Get())
	}
	if id, out := read("v3/app1@ttn/devices/dev1/up", fixture("ttn-v3-up.json")); out != Accepted || id != "dev1" {
		t.Fatalf("ttn: %q %v", id, out)
	}
	// An uplink on an auto filter is recognised, as the topic's device.
	if id, out := read("devices/0202020202020202/telemetry", uplink("0202020202020202", 1, 52.5, 13.4, time.Time{})); out != Accepted || id != "0202020202020202" {
		t.Fatalf("auto: %q %v", id, out)
	}
	// A heartbeat: routed and counted, not rejected.
	hb, _ := json.Marshal(map[string]any{"deviceInfo": map[string]any{"devEui": "0303030303030303"}, "fCnt": 5, "object": map[string]any{"battery": 3.6}})
	if _, out := read("application/a/device/0303030303030303/event/up", hb); out != Ignored || m.NoPosition.Get() != 1 {
		t.Fatalf("heartbeat: %v, %d without position", out, m.NoPosition.Get())
	}
	// Bad uplinks go to the reject topic, named by the topic's device.
	bad, _ := json.Marshal(map[string]any{"deviceInfo": map[string]any{"devEui": "04"}, "fCnt": 5, "object": map[string]any{"lat": 95, "lon": 1}})
	if _, out := read("application/a/device/04/event/up", bad); out != Rejected {
		t.Fatalf("bad: %v", out)
	}
	slash, _ := json.Marshal(map[string]any{"deviceInfo": map[string]any{"devEui": "a/b"}, "fCnt": 5, "object": map[string]any{"lat": 5, "lon": 1}})
	if _, out := read("application/a/device/05/event/up", slash); out != Forbidden {
		t.Fatalf("device id with a slash: %v", out)
	}
	if got := strings.Join(rej.topics, "; "); got != "a-04 lat_range; a-05 device_mismatch" {
		t.Errorf("rejects: %s", got)
	}
	if len(eng.pings) != 3 {
		t.Fatalf("%d pings, want 3", len(eng.pings))
	}
	p := eng.pings[0]
	if p.Source != payload.SourceGatewayGPS || !p.HasSeq || p.Seq != 10 || p.Lat != 52.520008 {
		t.Errorf("chirpstack ping %+v", p)
	}
	if m.TimeSource[payload.SourceGatewayGPS].Get() != 2 || m.TimeSource[payload.SourceNetwork].Get() != 1 {
		t.Errorf("time sources: gps %d network %d", m.TimeSource[payload.SourceGatewayGPS].Get(), m.TimeSource[payload.SourceNetwork].Get())
	}
}

// A frame the engine refused is retried by its publisher: the retry is
// no duplicate. The engine refuses for real: its one shard is owned by a
// publisher whose ENTER the sink holds, and its queue of one is full.
func TestRefusedUplinkRetryIsNoDuplicate(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Shards, cfg.Queue, cfg.Hold, cfg.HoldMin, cfg.HoldMax = 1, 1, 0, 0, 0
	sink := &blockingSink{entered: make(chan struct{}), release: make(chan struct{})}
	eng := newEngine(t, cfg, `{"type":"Feature","id":"depot","properties":{},
		"geometry":{"type":"Polygon","coordinates":[[[13.39,52.51],[13.41,52.51],[13.41,52.53],[13.39,52.53],[13.39,52.51]]]}}`, sink)
	r, took, _ := newReader(t, eng, "devices/+/telemetry", "application/+/device/+/event/up=chirpstack")
	owner := make(chan Refusal)
	go func() { // enters the depot: the sink holds the shard
		id, pos, at, _ := r.Read("devices/owner/telemetry", []byte(`{"lat":52.52,"lon":13.40}`), "owner")
		owner <- r.Submit(1, true, &pos, id, at)
	}()
	<-sink.entered
	id, pos, at, _ := r.Read("devices/queued/telemetry", []byte(`{"lat":52.0,"lon":13.0}`), "queued")
	if got := r.Submit(1, true, &pos, id, at); got != Taken {
		t.Fatalf("the queue's one ping: %v, want Taken", got)
	}
	body := uplink("0101010101010101", 7, 52.5, 13.4, time.Now())
	id, pos, at, out := r.Read("application/a/device/0101010101010101/event/up", body, "ns")
	if got := r.Submit(1, true, &pos, id, at); out != Accepted || got != Retry {
		t.Fatalf("refusal: %v, %v; want Accepted, Retry", out, got)
	}
	close(sink.release)
	if got := <-owner; got != Taken {
		t.Fatalf("owner: %v", got)
	}
	id, pos, at, out = r.Read("application/a/device/0101010101010101/event/up", body, "ns")
	if got := r.Submit(1, true, &pos, id, at); out != Accepted || got != Taken {
		t.Fatalf("retry: %v, %v; want Accepted, Taken", out, got)
	}
	took.mu.Lock()
	defer took.mu.Unlock()
	var frames int
	for _, p := range took.pings {
		if p.Device == "0101010101010101" {
			frames++
		}
	}
	if frames != 1 {
		t.Fatalf("the engine took the frame %d times, want once", frames)
	}
}

// blockingSink holds the first transition's publisher (and the shard it
// owns) until release is closed.
type blockingSink struct {
	once             sync.Once
	entered, release chan struct{}
}

func (s *blockingSink) Transition(*engine.Transition) {
	s.once.Do(func() {
		close(s.entered)
		<-s.release
	})
}

func (s *blockingSink) Late(*engine.Late) {}

// However a device's frames are delivered — each once or more, via any
// number of gateways, in any order, within the window — each frame makes
// exactly one ping; a new session (a rejoin) starts counting again.
func TestPropertyEachFrameOnePing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r, eng, _ := newLoRaReader(t, "application/+/device/+/event/up=chirpstack")
		devices := rapid.IntRange(1, 4).Draw(t, "devices")
		frames := rapid.IntRange(1, 40).Draw(t, "frames")
		type delivery struct {
			dev  int
			fcnt uint32
		}
		var all []delivery
		want := map[string]bool{}
		for d := range devices {
			start := rapid.Uint32Range(0, 1<<31).Draw(t, "start")
			for f := range frames {
				fc := start + uint32(f)
				want[fmt.Sprint(d, fc)] = true
				for range rapid.IntRange(1, 3).Draw(t, "copies") {
					all = append(all, delivery{d, fc})
				}
			}
		}
		// Shuffle within a reorder distance below the window.
		for i := range all {
			j := min(len(all)-1, i+rapid.IntRange(0, 20).Draw(t, "swap"))
			all[i], all[j] = all[j], all[i]
		}
		base := time.Now()
		for _, dl := range all {
			eui := fmt.Sprintf("%016x", dl.dev)
			body := uplink(eui, dl.fcnt, 52.5, 13.4, base.Add(time.Duration(dl.fcnt)*time.Second))
			id, pos, at, out := r.Read("application/a/device/"+eui+"/event/up", body, "ns")
			if out == Accepted {
				r.Submit(1, true, &pos, id, at)
			}
		}
		got := map[string]int{}
		for _, p := range eng.pings {
			var d int
			fmt.Sscanf(p.Device, "%x", &d)
			got[fmt.Sprint(d, p.Seq)]++
		}
		for k := range want {
			if got[k] != 1 {
				t.Fatalf("frame %s made %d pings", k, got[k])
			}
		}
		if len(got) != len(want) {
			t.Fatalf("%d frames pinged, want %d", len(got), len(want))
		}
	})
}

// Mappings reach the decoder from the filter.
func TestReaderMapping(t *testing.T) {
	r, eng, _ := newLoRaReader(t, "application/+/device/+/event/up=chirpstack,lat=gps.lat,lon=gps.lng,id=deviceName")
	body, _ := json.Marshal(map[string]any{"deviceInfo": map[string]any{"devEui": "01", "deviceName": "truck-9"}, "fCnt": 1,
		"object": map[string]any{"gps": map[string]any{"lat": 52.1, "lng": 13.1}}, "time": "2026-12-01T10:00:00Z"})
	id, pos, at, out := r.Read("application/a/device/01/event/up", body, "ns")
	if out != Accepted || id != "truck-9" || pos.Lat != 52.1 || pos.Lon != 13.1 {
		t.Fatalf("%q %+v %v", id, pos, out)
	}
	r.Submit(0, false, &pos, id, at)
	if len(eng.pings) != 1 || eng.pings[0].Source != payload.SourceNetwork {
		t.Fatalf("%+v", eng.pings)
	}
}

// The reader's LoRaWAN path allocates nothing per uplink once it knows
// the device: the id is the topic's own bytes, the frame window is found
// by lookup.
func TestReaderUplinkAllocs(t *testing.T) {
	r, _, _ := newLoRaReader(t, "application/+/device/+/event/up=chirpstack")
	const n = 300
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = uplink("0101010101010101", uint32(i), 52.5, 13.4, time.Now())
	}
	topic := "application/a/device/0101010101010101/event/up"
	r.Read(topic, bodies[0], "ns")
	i := 1
	if a := testing.AllocsPerRun(n-2, func() {
		if _, _, _, out := r.Read(topic, bodies[i], "ns"); out != Accepted {
			t.Fatalf("frame %d: %v", i, out)
		}
		i++
	}); a != 0 {
		t.Errorf("accepted uplink: %.1f allocations", a)
	}
	if a := testing.AllocsPerRun(50, func() { r.Read(topic, bodies[1], "ns") }); a != 0 {
		t.Errorf("duplicate uplink: %.1f allocations", a)
	}
}

// A device id spelled with escapes is decoded; the ping carries the id.
func TestReaderEscapedDeviceID(t *testing.T) {
	r, _, _ := newLoRaReader(t, "application/+/device/+/event/up=chirpstack")
	body := []byte(`{"deviceInfo":{"devEui":"truck\u002d42"},"fCnt":1,"object":{"lat":1,"lon":2}}`)
	if id, _, _, out := r.Read("application/a/device/truck-42/event/up", body, "ns"); out != Accepted || id != "truck-42" {
		t.Fatalf("%q %v", id, out)
	}
}

// serve's --capture taps every ping the engine took: taking a publish to
// the engine and the tap still does not allocate (through an Engine
// interface wrapping the engine it did, per ping).
func TestSubmitWithTapDoesNotAllocate(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.Shards = 1
	r, _, _ := newReader(t, newEngine(t, cfg, "", discard{}), "devices/+/telemetry")
	var tapped int
	r.Tap(func(p engine.Ping) { tapped += len(p.Device) })
	base := time.Now().Add(-time.Minute).UnixMilli()
	bodies := make([][]byte, 512)
	for i := range bodies {
		bodies[i] = fmt.Appendf(nil, `{"lat":52.5,"lon":13.4,"ts":%d}`, base+int64(i))
	}
	i := 0
	if a := testing.AllocsPerRun(len(bodies)-2, func() {
		id, pos, at, out := r.Read("devices/truck/telemetry", bodies[i], "c")
		if out != Accepted || r.Submit(1, true, &pos, id, at) != Taken {
			t.Fatalf("ping %d: %v", i, out)
		}
		i++
	}); a != 0 {
		t.Fatalf("Read and Submit with a tap allocate %.1f times per ping, want 0", a)
	}
	if tapped == 0 {
		t.Fatal("the tap saw no ping")
	}
}
