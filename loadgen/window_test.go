package loadgen_test

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/edgefence/edgefence/loadgen"
	"github.com/edgefence/edgefence/loadgen/fencegen"
)

// Unthrottled, every window is kept full and every ping is acknowledged:
// a full window waits for the acknowledgement that opens it.
func TestUnthrottledKeepsWindowsFull(t *testing.T) {
	srv, fences := startBroker(t, true)
	cfg := tinyLoad(srv, fences, "")
	cfg.Rate, cfg.Window = 0, 4
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Sent < int64(cfg.Conns*cfg.Window)*10 || res.Acked != res.Sent || res.Unacked != 0 {
		t.Fatalf("sent %d, acked %d, unacked %d: want many windows' worth, all acknowledged", res.Sent, res.Acked, res.Unacked)
	}
}

// silentBroker accepts MQTT connections, acknowledges the CONNECT and
// then reads and drops everything: a broker refusing QoS 1 pings without
// acknowledging them.
func silentBroker(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_, _ = c.Write([]byte{0x20, 0x02, 0x00, 0x00}) // CONNACK, accepted
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	return ln.Addr().String()
}

// Full windows whose pings are never acknowledged are released after
// --ack-timeout, counted unacked, and sending resumes: the worker still
// looks at full windows for timeouts.
func TestFullWindowsTimeOutAndResume(t *testing.T) {
	cfg := loadgen.DefaultConfig()
	cfg.Addr = silentBroker(t)
	cfg.Conns, cfg.DevicesPerConn, cfg.Window, cfg.Rate = 2, 1, 4, 0
	cfg.Sub, cfg.MetricsURL = "", ""
	cfg.AckTimeout = 100 * time.Millisecond
	cfg.Warmup, cfg.Duration, cfg.Drain = 0, time.Second, 200*time.Millisecond
	cfg.Fences = []fencegen.Fence{{ID: "f", Lat: 52.52, Lon: 13.40, Radius: 100}}
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if full := int64(cfg.Conns * cfg.Window); res.Sent <= 2*full || res.Acked != 0 || res.Unacked != res.Sent {
		t.Fatalf("sent %d, acked %d, unacked %d: want windows released and refilled after each timeout, none acknowledged",
			res.Sent, res.Acked, res.Unacked)
	}
}
