package broker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/loadgen"
)

// BenchmarkPingPath measures a ping's whole way through the broker: 50
// connections over loopback TCP, each a gateway for 10 devices walking in
// and out of a fence, send QoS 1 pings in writes of 8 and wait for their
// PUBACKs; mochi reads them, the hooks check, decode and submit them to
// the engine (hold 500 ms, the bundled fences), and mochi acknowledges.
// ns/op is wall time per ping; cpu-ns/ping the process's CPU time per
// ping, the clients' included, as allocs/op counts theirs (they reuse
// their buffers).
//
// store=true runs it with a data dir: one ping in 10 of a device crosses
// the fence's edge, about the ceiling's share of pings that cause a
// transition, and each transition is stored (docs/persistence.md).
func BenchmarkPingPath(b *testing.B) {
	for _, disk := range []bool{false, true} {
		b.Run(fmt.Sprintf("store=%v", disk), func(b *testing.B) {
			dir := ""
			if disk {
				dir = b.TempDir()
			}
			benchPingPath(b, dir)
		})
	}
}

func benchPingPath(b *testing.B, dataDir string) {
	const conns, devices, window = 50, 10, 8
	cfg := DefaultConfig()
	cfg.MQTTAddr, cfg.HTTPAddr, cfg.DataDir = "127.0.0.1:0", "", dataDir
	cfg.Fences = filepath.Join("..", "fences.geojson")
	cfg.CloseTimeout = 5 * time.Second
	cfg.PublishRate = 0
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close(context.Background())

	type client struct {
		c   net.Conn
		rd  *loadgen.Reader
		buf []byte
		pay []byte
	}
	cls := make([]*client, conns)
	for i := range cls {
		c, err := net.Dial("tcp", srv.MQTTAddr())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		cl := &client{c: c, rd: loadgen.NewReader(c, 1024, 1<<16)}
		connect, _ := loadgen.AppendConnect(nil, fmt.Sprintf("bench-%d", i), 60)
		if _, err := c.Write(connect); err != nil {
			b.Fatal(err)
		}
		if code, err := cl.rd.ReadConnack(); err != nil || code != 0 {
			b.Fatalf("CONNACK %d, %v", code, err)
		}
		cls[i] = cl
	}
	topics := make([]string, conns*devices)
	for i := range topics {
		topics[i] = fmt.Sprintf("devices/bench-%d/telemetry", i)
	}
	base := time.Now().Add(-time.Minute).UnixMilli()
	per := (b.N + conns - 1) / conns
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i, cl := range cls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := uint16(0)
			for sent := 0; sent < per; sent += window {
				cl.buf = cl.buf[:0]
				n := min(window, per-sent)
				for k := range n {
					seq := sent + k
					lat := "52.5140" // inside zone-tiergarten
					if seq/(devices*4)%2 == 1 {
						lat = "52.5250"
					}
					cl.pay = append(cl.pay[:0], `{"lat":`...)
					cl.pay = append(cl.pay, lat...)
					cl.pay = append(cl.pay, `,"lon":13.3560,"ts":`...)
					cl.pay = fmt.Append(cl.pay, base+int64(seq))
					cl.pay = append(cl.pay, '}')
					id = id%65535 + 1
					var err error
					if cl.buf, err = loadgen.AppendPublish(cl.buf, topics[i*devices+seq%devices], 1, id, cl.pay); err != nil {
						errs <- err
						return
					}
				}
				if _, err := cl.c.Write(cl.buf); err != nil {
					errs <- err
					return
				}
				for range n {
					fh, _, err := cl.rd.Next()
					if err != nil || fh.Type != packets.Puback {
						errs <- fmt.Errorf("want PUBACK: type %d, %v", fh.Type, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(per*conns), "cpu-ns/ping")
	if dataDir != "" {
		b.ReportMetric(float64(srv.set.GetOrCreateCounter(`edgefence_store_writes_total`).Get())/float64(per*conns), "stored/ping")
	}
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// processCPU is the process's user and system CPU time so far: on a
// machine other work shares, the CPU a ping costs is steadier than the
// wall time per ping.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
