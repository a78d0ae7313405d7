package loadgen_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/edgefence/edgefence/loadgen"
)

// countingBroker accepts one MQTT connection, acknowledges its CONNECT
// and each QoS 1 PUBLISH, and reports how many PUBLISHes each read of the
// socket brought.
func countingBroker(t *testing.T) (addr string, perRead func() []int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		counts []int
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
		buf := make([]byte, 64<<10)
		var pending []byte
		connected := false
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			pending = append(pending, buf[:n]...)
			var acks []byte
			publishes := 0
			for len(pending) >= 2 {
				size, hdr := 0, 1
				for mult := 1; ; mult *= 128 {
					if hdr >= len(pending) {
						size = -1
						break
					}
					b := pending[hdr]
					hdr++
					size += int(b&127) * mult
					if b < 128 {
						break
					}
				}
				if size < 0 || hdr+size > len(pending) {
					break
				}
				pk := pending[:hdr+size]
				pending = pending[hdr+size:]
				switch pk[0] >> 4 {
				case 1: // CONNECT
					if !connected {
						connected = true
						acks = append(acks, 0x20, 0x02, 0x00, 0x00)
					}
				case 3: // PUBLISH, QoS 1: the packet id follows the topic
					publishes++
					body := pk[hdr:]
					tl := int(body[0])<<8 | int(body[1])
					acks = append(acks, 0x40, 0x02, body[2+tl], body[3+tl])
				}
			}
			if publishes > 0 {
				mu.Lock()
				counts = append(counts, publishes)
				mu.Unlock()
			}
			if len(acks) > 0 {
				if _, err := c.Write(acks); err != nil {
					return
				}
			}
		}
	}()
	return ln.Addr().String(), func() []int {
		mu.Lock()
		defer mu.Unlock()
		return append([]int(nil), counts...)
	}
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
	cfg.Fences = []loadgen.Fence{{ID: "f", Lat: 52.52, Lon: 13.40, Radius: 100}}
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
	cfg.Fences = []loadgen.Fence{{ID: "f", Lat: 52.52, Lon: 13.40, Radius: 100}}
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
