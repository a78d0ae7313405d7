package broker

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/loadgen"
)

// BenchmarkTransitionPath measures what a decided transition costs from
// the engine's hand-over to a dashboard's socket: the payload, the
// retained set, the store (store=true: a --data-dir), mochi's routing and
// the subscriber's writer, with one QoS 1 subscriber on geofence/# reading
// over loopback TCP. allocs/op counts every goroutine's allocations, the
// subscriber's reads included (it reuses its buffers); cpu-ns/op is the
// process's CPU time (user + system) per transition.
func BenchmarkTransitionPath(b *testing.B) {
	for _, disk := range []bool{false, true} {
		b.Run(fmt.Sprintf("store=%v", disk), func(b *testing.B) { benchTransitionPath(b, disk) })
	}
}

func benchTransitionPath(b *testing.B, disk bool) {
	cfg := DefaultConfig()
	cfg.MQTTAddr, cfg.HTTPAddr, cfg.DataDir = "127.0.0.1:0", "", ""
	if disk {
		cfg.DataDir = b.TempDir()
	}
	cfg.Fences = filepath.Join("..", "fences.geojson")
	cfg.CloseTimeout = 5 * time.Second
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close(context.Background())

	conn, err := net.Dial("tcp", srv.MQTTAddr())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	hello, err := loadgen.AppendConnect(nil, "dashboard", 60)
	if err == nil {
		hello, err = loadgen.AppendSubscribe(hello, 1, "geofence/#", 1)
	}
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.Write(hello); err != nil {
		b.Fatal(err)
	}
	r := loadgen.NewReader(conn, 64<<10, 1<<20)
	if rc, err := r.ReadConnack(); err != nil || rc != 0 {
		b.Fatalf("connack %d: %v", rc, err)
	}
	if _, _, err := r.Next(); err != nil { // SUBACK
		b.Fatal(err)
	}
	var got atomic.Int64
	progress := make(chan struct{}, 1) // the dashboard got one more
	go func() {
		ack := make([]byte, 0, 4)
		for {
			fh, body, err := r.Next()
			if err != nil {
				return
			}
			if fh.Type != packets.Publish {
				continue
			}
			// The packet id follows the topic: read here rather than
			// with ParsePublish, whose topic string would count in
			// allocs/op as the broker's.
			n := 2 + (int(body[0])<<8 | int(body[1]))
			if fh.Qos == 0 || len(body) < n+2 {
				b.Errorf("PUBLISH qos %d of %d bytes", fh.Qos, len(body))
				return
			}
			id := uint16(body[n])<<8 | uint16(body[n+1])
			if _, err := conn.Write(loadgen.AppendPuback(ack[:0], id)); err != nil {
				return
			}
			got.Add(1)
			select {
			case progress <- struct{}{}:
			default:
			}
		}
	}()

	// In flight at most half the subscriber's outbound queue
	// (DefaultClientQueue): a window as long as the queue lets mochi shed.
	const devices, window = 1000, DefaultClientQueue / 2
	names := make([]string, devices)
	for i := range names {
		names[i] = fmt.Sprintf("bench-%04d", i)
	}
	now := time.Now()
	tr := engine.Transition{Fence: "museum", Lat: 52.36, Lon: 4.885, Ingest: now, Decided: now, Event: now.UnixNano()}
	b.ReportAllocs()
	b.ResetTimer()
	commits0 := srv.set.GetOrCreateCounter(`edgefence_store_commits_total`).Get()
	cpu0 := cpuTime()
	for i := range b.N {
		tr.Device = names[i%devices]
		tr.Type = engine.Enter
		if i/devices%2 == 1 {
			tr.Type = engine.Exit
		}
		srv.pub.Transition(&tr)
		// Unthrottled, the hand-over outruns the dashboard and mochi
		// sheds what its queue cannot hold (counted, as in production);
		// the benchmark measures the path, so it keeps within a window.
		// It waits blocked, not spinning: a spin would count as the
		// path's CPU for as long as a commit waits on the disk.
		for int64(i)-got.Load() > window {
			<-progress
		}
	}
	for deadline := time.Now().Add(30 * time.Second); got.Load() < int64(b.N); {
		if time.Now().After(deadline) {
			b.Fatalf("the dashboard got %d of %d transitions", got.Load(), b.N)
		}
		time.Sleep(100 * time.Microsecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	if disk {
		commits := srv.set.GetOrCreateCounter(`edgefence_store_commits_total`).Get() - commits0
		b.ReportMetric(float64(b.N)/float64(max(commits, 1)), "transitions/commit")
	}
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
