package hooks

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/sharded"
	"github.com/edgefence/edgefence/evaluator/stats"
	"github.com/edgefence/edgefence/ingest"
)

type discard struct{}

func (discard) Transition(*engine.Transition)                        {}
func (discard) Late(*engine.Late)                                    {}
func (discard) Rejected(device, topic, reason, msg string, b []byte) {}

// newTelemetry is the hook in front of a real engine with one fence and
// the default hold, as serve runs it.
func newTelemetry(tb testing.TB) *Telemetry {
	tb.Helper()
	fences, err := fence.Parse([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"depot",
		"properties":{},"geometry":{"type":"Polygon","coordinates":[[[13.39,52.51],[13.41,52.51],[13.41,52.53],[13.39,52.53],[13.39,52.51]]]}}]}`))
	if err != nil {
		tb.Fatal(err)
	}
	cfg := engine.DefaultConfig()
	cfg.Shards = 1
	eng, err := sharded.New(cfg, fences, discard{}, stats.NewMetrics(metrics.NewSet()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(eng.Close)
	tf, _ := ingest.ParseTelemetryFilter("devices/+/telemetry")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	return NewTelemetry(ingest.NewReader([]ingest.TelemetryFilter{tf}, eng, discard{}, ingest.NewMetrics(metrics.NewSet()), log, 0), log)
}

// telemetryPackets are QoS 1 pings of a few devices walking in and out of
// the fence, with strictly increasing stamps.
func telemetryPackets(n int) []packets.Packet {
	base := time.Now().Add(-time.Minute).UnixMilli()
	pks := make([]packets.Packet, n)
	for i := range pks {
		lat := 52.52
		if i%20 >= 10 {
			lat = 52.50
		}
		pks[i] = packets.Packet{
			FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1},
			TopicName:   fmt.Sprintf("devices/truck-%d/telemetry", i%8),
			Payload:     fmt.Appendf(nil, `{"lat":%.5f,"lon":13.40,"ts":%d}`, lat, base+int64(i)),
			PacketID:    uint16(i%65535 + 1),
		}
	}
	return pks
}

// The hook is on every tracker publish: taking a ping from a publish to
// the engine must not allocate (each allocation is GC work per ping).
func TestTelemetryOnPublishDoesNotAllocate(t *testing.T) {
	h := newTelemetry(t)
	cl := &mqtt.Client{}
	pks := telemetryPackets(4096)
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		if _, err := h.OnPublish(cl, pks[i%len(pks)]); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Fatalf("OnPublish allocates %.1f times per ping, want 0", allocs)
	}
}

func BenchmarkTelemetryOnPublish(b *testing.B) {
	h := newTelemetry(b)
	cl := &mqtt.Client{}
	pks := telemetryPackets(1 << 16)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := h.OnPublish(cl, pks[i%len(pks)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// With nobody subscribed to telemetry, a valid ping is not routed (marked
// Ignore, with no error: a returned packets.Code would be boxed, per ping,
// by mochi's errors.Is checks; mochi still acknowledges it) — still
// without allocating.
func TestTelemetryUnroutedPingIsIgnoredWithoutAllocating(t *testing.T) {
	h := newTelemetry(t)
	h.routes.known.Store(true) // counted: no subscriber
	cl := &mqtt.Client{}
	cl.Properties.ProtocolVersion = 4
	pks := telemetryPackets(4096)
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		out, err := h.OnPublish(cl, pks[i%len(pks)])
		if err != nil || !out.Ignore {
			t.Fatalf("OnPublish = ignore %v, %v; want the packet marked Ignore and no error", out.Ignore, err)
		}
		i++
	})
	if allocs != 0 {
		t.Fatalf("OnPublish allocates %.1f times per ping, want 0", allocs)
	}
	h.routes.wanted.Store(true) // a subscriber appeared
	if out, err := h.OnPublish(cl, pks[0]); err != nil || out.Ignore {
		t.Fatalf("with a subscriber: ignore %v, %v; want routed", out.Ignore, err)
	}
}
