package broker

import (
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/edgefence/edgefence/evaluator"
)

// trackerLoop is a tracker connection that sends its stream again and
// again and takes every write, counting the bytes.
type trackerLoop struct {
	loopConn
	written int
}

func (c *trackerLoop) Write(p []byte) (int, error) { c.written += len(p); return len(p), nil }
func (c *trackerLoop) RemoteAddr() net.Addr        { return &net.TCPAddr{} }

// trackerReaders are n logged-in 3.1.1 connections of the tracker
// listener, each a gateway's stream of QoS 1 pings of 10 devices, in front
// of a real engine with the bundled fences and the hold given.
func trackerReaders(tb testing.TB, n int, hold time.Duration) []*trackerConn {
	tb.Helper()
	tel, access, srv := pingRig(tb, hold)
	t := &trackerListener{
		cfg: &Config{ClientReadBuffer: DefaultClientReadBuffer, MaxPacketSize: 64 << 10},
		log: slog.New(slog.NewTextHandler(io.Discard, nil)), srv: srv, tel: tel, access: access,
		info: newTrackerMetrics(metrics.NewSet()), taken: metrics.NewSet().NewCounter("taken"),
	}
	conns := make([]*trackerConn, n)
	for k := range conns {
		tc := newTrackerConn(t, &trackerLoop{loopConn: loopConn{stream: gatewayStream(k, false)}})
		tc.buf = make([]byte, DefaultClientReadBuffer)
		tc.ok, tc.id = true, "gateway"
		conns[k] = tc
	}
	return conns
}

// readPings has tc read once: every ping read is acknowledged, nothing is
// refused, nothing closes.
func readPings(tb testing.TB, tc *trackerConn) {
	if err := tc.readOnce(); err != nil {
		tb.Fatalf("readOnce: %v", err)
	}
}

// A tracker listener connection reads, evaluates and acknowledges pings
// without allocating once its topics are known.
func TestTrackerIngestDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not measured under the race detector (.ci/run runs the allocation tests again without it)")
	}
	conns := trackerReaders(t, 100, 0)
	i := 0
	for ; i < 8*len(conns); i++ { // the devices and topics are new the first time
		readPings(t, conns[i%len(conns)])
	}
	allocs := testing.AllocsPerRun(400, func() {
		readPings(t, conns[i%len(conns)])
		i++
	})
	if allocs != 0 {
		t.Fatalf("%.2f allocations per read, want 0", allocs)
	}
	acked := 0
	for _, tc := range conns {
		acked += tc.c.(*trackerLoop).written / 4
	}
	// Each read is whole pings but for one cut short at its end; with no
	// hold and no other goroutine at the engine, each is acknowledged.
	read := atomic.LoadInt64(&conns[0].t.srv.Info.MessagesReceived)
	if reads := int64(i); read < 10*reads || int64(acked) < read*9/10 {
		t.Fatalf("%d reads took %d pings and wrote %d PUBACKs: want about 16 pings a read, each acknowledged", reads, read, acked)
	}
}

// BenchmarkTrackerIngest reads 1,000 gateways' pings (10,000 devices) off
// their tracker-listener connections, as its readers do: framing, the
// ACL, decoding, the engine, one write of PUBACKs per read. Comparable to
// BenchmarkDirectIngest, the MQTT listener's same path: both count every
// ping read, the ones the engine's full queue refuses too (at this rate,
// with the hold's deadlines releasing beside it, some are).
func BenchmarkTrackerIngest(b *testing.B) {
	conns := trackerReaders(b, 1000, evaluator.DefaultConfig().Hold)
	for i := range 4 * len(conns) {
		readPings(b, conns[i%len(conns)])
	}
	info := conns[0].t.srv.Info
	before := atomic.LoadInt64(&info.MessagesReceived)
	b.ReportAllocs()
	start := time.Now()
	i := 0
	for b.Loop() {
		readPings(b, conns[i%len(conns)])
		i++
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(atomic.LoadInt64(&info.MessagesReceived)-before), "ns/ping")
}
