package loadgen_test

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/loadgen"
	"github.com/edgefence/edgefence/loadgen/fencegen"
)

// countingBroker accepts one MQTT connection, acknowledges its CONNECT
// and each QoS 1 PUBLISH, and reports how many PUBLISHes each read of the
// socket brought: the load generator's own Reader parses them, over a
// reader that numbers the socket's reads (a packet counts for the read
// that brought its last byte).
func countingBroker(t *testing.T) (addr string, perRead func() []int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		counts = map[int]int{} // read number → PUBLISHes it completed
		wg     sync.WaitGroup
	)
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		src := &numberedReads{r: c}
		rd := loadgen.NewReader(src, 64<<10, 1<<20)
		for {
			fh, body, err := rd.Next()
			if err != nil {
				return
			}
			var ack []byte
			switch fh.Type {
			case packets.Connect:
				ack = []byte{0x20, 0x02, 0x00, 0x00}
			case packets.Publish:
				p, err := loadgen.ParsePublish(fh, body)
				if err != nil {
					t.Errorf("PUBLISH: %v", err)
					return
				}
				mu.Lock()
				counts[src.n]++
				mu.Unlock()
				ack = loadgen.AppendPuback(nil, p.PacketID)
			}
			if _, err := c.Write(ack); err != nil {
				return
			}
		}
	}()
	return ln.Addr().String(), func() []int {
		mu.Lock()
		defer mu.Unlock()
		var out []int
		for _, n := range counts {
			out = append(out, n)
		}
		return out
	}
}

// numberedReads counts the reads of r.
type numberedReads struct {
	r io.Reader
	n int
}

func (c *numberedReads) Read(p []byte) (int, error) {
	c.n++
	return c.r.Read(p)
}

// Paced with --burst, a connection's pings leave that many to a write, as
// a gateway forwarding its devices' pings together would send them; the
// broker reads them in groups of the burst, never one by one.
func TestPacedBurstsLeaveInWholeWrites(t *testing.T) {
	addr, perRead := countingBroker(t)
	cfg := loadgen.DefaultConfig()
	cfg.Addr = addr
	cfg.Conns, cfg.DevicesPerConn, cfg.Window = 1, 4, 8
	cfg.Rate, cfg.Burst = 40, 4 // a write of 4 every 100 ms
	cfg.Sub, cfg.MetricsURL = "", ""
	cfg.Warmup, cfg.Duration, cfg.Drain = 0, time.Second, 500*time.Millisecond
	cfg.Fences = []fencegen.Fence{{ID: "f", Lat: 52.52, Lon: 13.40, Radius: 100}}
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	counts := perRead()
	if res.Sent < 20 || res.Sent%4 != 0 || res.Acked != res.Sent {
		t.Fatalf("sent %d, acked %d: want about 40 pings in writes of 4, all acknowledged", res.Sent, res.Acked)
	}
	for _, n := range counts {
		if n%4 != 0 {
			t.Fatalf("a read brought %d pings (reads: %v): want whole bursts of 4", n, counts)
		}
	}
}

// A burst larger than the window could never be sent whole.
func TestBurstIsValidated(t *testing.T) {
	cfg := loadgen.DefaultConfig()
	cfg.Fences = []fencegen.Fence{{ID: "f", Lat: 52.52, Lon: 13.40, Radius: 100}}
	cfg.Window, cfg.Burst = 4, 8
	if err := cfg.Validate(); err == nil {
		t.Fatal("burst 8 with window 4 validated")
	}
	cfg.Burst = 0
	if err := cfg.Validate(); err == nil {
		t.Fatal("burst 0 validated")
	}
	cfg.Burst = 4
	if err := cfg.Validate(); err != nil {
		t.Fatalf("burst 4, window 4: %v", err)
	}
}
