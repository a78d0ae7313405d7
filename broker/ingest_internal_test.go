package broker

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"

	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/hooks"
	"github.com/edgefence/edgefence/loadgen"
)

// raceEnabled is set by race_internal_test.go.
var raceEnabled bool

type discardOutput struct{}

func (discardOutput) Transition(*evaluator.Transition)                     {}
func (discardOutput) Late(*evaluator.Late)                                 {}
func (discardOutput) Rejected(device, topic, reason, msg string, b []byte) {}

// discardConn takes every write.
type discardConn struct{ net.Conn }

func (discardConn) Write(p []byte) (int, error) { return len(p), nil }
func (discardConn) RemoteAddr() net.Addr        { return &net.TCPAddr{} }
func (discardConn) Close() error                { return nil }

// loopConn serves its stream again and again, a read buffer at a time.
type loopConn struct {
	chunkConn
	stream []byte
	off    int
}

func (c *loopConn) Read(p []byte) (int, error) {
	n := copy(p, c.stream[c.off:])
	c.off = (c.off + n) % len(c.stream)
	return n, nil
}

// pingsPerRead is how many pings the benchmark's stream has between two
// PINGREQs, each of which ends a Read.
const pingsPerRead = 16

// directReaders are n connections of 3.1.1 trackers admitted by mochi,
// taken by ingest, in front of a real engine with the bundled fences and
// the hold given (serve's default: evaluator.DefaultConfig().Hold): each a gateway's stream of QoS 1
// pings of 10 devices (no stamp: clamped to the ingest time, so that the
// stream can repeat), a PINGREQ after every pingsPerRead.
func directReaders(tb testing.TB, n int, hold time.Duration) []*coalescingConn {
	tb.Helper()
	tel, access, srv := pingRig(tb, hold)
	in := &ingest{tel: tel, access: access, info: srv.Info, taken: metrics.NewSet().NewCounter("taken")}
	conns := make([]*coalescingConn, n)
	for k := range conns {
		cl := srv.NewClient(discardConn{}, "t", fmt.Sprint("gateway-", k), false)
		cl.Properties.ProtocolVersion = 4
		tb.Cleanup(func() { cl.Stop(nil) })
		c := newCoalescingConn(&loopConn{stream: gatewayStream(k, true)})
		c.frames = newFrames(DefaultClientReadBuffer)
		c.frames.in, c.frames.cl = in, cl
		conns[k] = c
	}
	return conns
}

// pingRig is a real engine with the bundled fences and the hold given,
// and the telemetry and access hooks in front of it, on a mochi server
// nobody subscribes to.
func pingRig(tb testing.TB, hold time.Duration) (*hooks.Telemetry, *hooks.Access, *mqtt.Server) {
	tb.Helper()
	data, err := os.ReadFile("../fences.geojson")
	if err != nil {
		tb.Fatal(err)
	}
	fences, err := fence.Parse(data)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := evaluator.DefaultConfig()
	cfg.Shards = 1
	cfg.Hold = hold
	eng, err := evaluator.New(cfg, fences, discardOutput{}, evaluator.NewMetrics(metrics.NewSet()))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(eng.Close)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	filters := hooks.DefaultFilters()
	tel := hooks.NewTelemetry(filters, eng, discardOutput{}, hooks.NewMetrics(metrics.NewSet()), log, 0)
	srv := mqtt.New(nil)
	tel.Watch(srv) // nobody subscribes
	return tel, hooks.NewAccess(nil, filters, "geofence", "edgefence/late", "edgefence/rejected", log), srv
}

// gatewayStream is gateway k's QoS 1 pings of 10 devices, 4 ×
// pingsPerRead of them, with a PINGREQ after every pingsPerRead when
// pingreqs is set.
func gatewayStream(k int, pingreqs bool) []byte {
	var stream []byte
	for i := 0; i < 4*pingsPerRead; i++ {
		lat := 52.52
		if i%20 >= 10 {
			lat = 52.50
		}
		stream = loadgen.AppendPublish(stream, fmt.Sprintf("devices/g%d-truck-%d/telemetry", k, i%10), 1, uint16(i+1),
			fmt.Appendf(nil, `{"lat":%.5f,"lon":13.40}`, lat))
		if pingreqs && i%pingsPerRead == pingsPerRead-1 {
			stream = loadgen.AppendPingreq(stream)
		}
	}
	return stream
}

// readPingreq reads until the PINGREQ that follows a run of pings: all
// of them taken, nothing else handed on.
func readPingreq(tb testing.TB, c *coalescingConn, p []byte) {
	n, err := c.Read(p)
	if err != nil || n != 2 || p[0] != 0xc0 {
		tb.Fatalf("Read = % x, %v; want only the PINGREQ", p[:n], err)
	}
}

// Taking a ping off the connection — framing, the checks mochi would make,
// decoding, the engine, the PUBACK — allocates nothing once a tracker's
// topics are known.
func TestDirectIngestDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not measured under the race detector (.ci/run runs the allocation tests again without it)")
	}
	// No hold: the reorder buffers would be growing for its first half
	// second (BenchmarkPipeline shows they stop).
	conns := directReaders(t, 100, 0)
	p := make([]byte, 1024)
	i := 0
	for ; i < 4*len(conns); i++ { // the devices and topics are new the first time
		readPingreq(t, conns[i%len(conns)], p)
	}
	allocs := testing.AllocsPerRun(400, func() {
		readPingreq(t, conns[i%len(conns)], p)
		i++
	})
	if allocs != 0 {
		t.Fatalf("%.2f allocations per %d pings, want 0", allocs, pingsPerRead)
	}
}

// BenchmarkDirectIngest reads 1,000 gateways' pings (10,000 devices) off
// their connections, as the broker's readers do.
func BenchmarkDirectIngest(b *testing.B) {
	conns := directReaders(b, 1000, evaluator.DefaultConfig().Hold)
	p := make([]byte, 1024)
	for i := range 4 * len(conns) {
		readPingreq(b, conns[i%len(conns)], p)
	}
	b.ReportAllocs()
	start := time.Now()
	i := 0
	for b.Loop() {
		readPingreq(b, conns[i%len(conns)], p)
		i++
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(i*pingsPerRead), "ns/ping")
}
