package hooks

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/evaluator/fence"
)

type discard struct{}

func (discard) Transition(*evaluator.Transition)                     {}
func (discard) Late(*evaluator.Late)                                 {}
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
	cfg := evaluator.DefaultConfig()
	cfg.Shards = 1
	eng, err := evaluator.New(cfg, fences, discard{}, evaluator.NewMetrics(metrics.NewSet()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(eng.Close)
	tf, _ := ParseTelemetryFilter("devices/+/telemetry")
	return NewTelemetry([]TelemetryFilter{tf}, eng, discard{}, NewMetrics(metrics.NewSet()), slog.New(slog.NewTextHandler(io.Discard, nil)), 0)
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

// sentCounter counts the packets mochi's own writer sends.
type sentCounter struct {
	mqtt.HookBase
	n atomic.Int32
}

func (*sentCounter) ID() string                                          { return "sent-counter" }
func (*sentCounter) Provides(b byte) bool                                { return b == mqtt.OnPacketSent }
func (c *sentCounter) OnPacketSent(*mqtt.Client, packets.Packet, []byte) { c.n.Add(1) }

// sink is a connection that takes every write.
type sink struct{ net.Conn }

func (sink) Write(p []byte) (int, error) { return len(p), nil }
func (sink) RemoteAddr() net.Addr        { return &net.TCPAddr{} }
func (sink) Close() error                { return nil }

// With nobody subscribed to telemetry, a valid ping is acknowledged and not
// routed (marked Ignore, with no error: a returned packets.Code would be
// boxed, per ping, by mochi's errors.Is checks) — still without allocating.
func TestTelemetryUnroutedPingIsIgnoredWithoutAllocating(t *testing.T) {
	h := newTelemetry(t)
	h.routes.known.Store(true) // counted: no subscriber
	// A client with a connection: the hook writes its PUBACKs to it.
	cl := mqtt.New(nil).NewClient(sink{}, "t", "tracker", false)
	cl.Properties.ProtocolVersion = 4
	defer cl.Stop(nil)
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

// An unrouted QoS 1 ping is acknowledged by the hook and handed back to
// mochi as QoS 0, so that mochi does not store an acknowledgement in the
// client's inflight map; a routed one keeps its QoS for its subscribers
// and is left for mochi to acknowledge. The PUBACK is byte for byte the
// one mochi writes (MQTT 5 user properties carried back), and counted in
// the server's $SYS statistics as mochi counts its own.
func TestTelemetryAcknowledgesUnroutedPings(t *testing.T) {
	for _, tc := range []struct {
		name       string
		version    byte
		user       []packets.UserProperty
		subscriber bool // the tracker subscribes too
		want       []byte
		viaMochi   bool // written by mochi's writer, not the hook's four bytes
	}{
		{"3.1.1", 4, nil, false, []byte{0x40, 0x02, 0x12, 0x34}, false},
		{"5", 5, nil, false, []byte{0x40, 0x02, 0x12, 0x34}, false},
		{"5 user properties", 5, []packets.UserProperty{{Key: "k", Val: "v"}}, false,
			[]byte{0x40, 0x0b, 0x12, 0x34, 0x00, 0x07, 0x26, 0x00, 0x01, 'k', 0x00, 0x01, 'v'}, true},
		// mochi may hold a subscriber's writes in a buffer: only its own
		// writer keeps the PUBACKs in order then.
		{"3.1.1 subscriber", 4, nil, true, []byte{0x40, 0x02, 0x12, 0x34}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newTelemetry(t)
			h.routes.known.Store(true) // counted: no subscriber to telemetry
			srv := mqtt.New(nil)
			sent := &sentCounter{}
			if err := srv.AddHook(sent, nil); err != nil {
				t.Fatal(err)
			}
			h.CountSentIn(srv.Info)
			ours, theirs := net.Pipe()
			defer theirs.Close()
			cl := srv.NewClient(ours, "t", "tracker", false)
			cl.Properties.ProtocolVersion = tc.version
			if tc.subscriber {
				cl.State.Subscriptions.Add("commands/#", packets.Subscription{Filter: "commands/#"})
			}
			defer cl.Stop(nil)

			got := make(chan []byte, 1)
			go func() {
				b := make([]byte, len(tc.want))
				_, _ = io.ReadFull(theirs, b)
				got <- b
			}()
			pk := telemetryPackets(1)[0]
			pk.PacketID = 0x1234
			pk.Properties.User = tc.user
			out, err := h.OnPublish(cl, pk)
			if err != nil || !out.Ignore || out.FixedHeader.Qos != 0 {
				t.Fatalf("OnPublish = ignore %v, qos %d, %v; want an ignored QoS 0 packet for mochi", out.Ignore, out.FixedHeader.Qos, err)
			}
			select {
			case b := <-got:
				if string(b) != string(tc.want) {
					t.Fatalf("the client got % x, want PUBACK % x", b, tc.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no PUBACK")
			}
			if p, n := srv.Info.PacketsSent, srv.Info.BytesSent; p != 1 || n != int64(len(tc.want)) {
				t.Fatalf("$SYS counts %d packets, %d bytes sent; want 1, %d", p, n, len(tc.want))
			}
			if got := sent.n.Load() == 1; got != tc.viaMochi {
				t.Fatalf("written by mochi's writer: %v, want %v", got, tc.viaMochi)
			}

			h.routes.wanted.Store(true)                       // a subscriber appeared
			_ = ours.SetDeadline(time.Now().Add(time.Second)) // a write here would block: nobody reads
			if out, err := h.OnPublish(cl, telemetryPackets(2)[1]); err != nil || out.Ignore || out.FixedHeader.Qos != 1 {
				t.Fatalf("routed: ignore %v, qos %d, %v; want QoS 1 left to mochi", out.Ignore, out.FixedHeader.Qos, err)
			}
		})
	}
}
