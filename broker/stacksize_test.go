// The race detector's instrumentation makes every frame larger, so the
// stack sizes this test checks are those of a build without it (CI runs
// it so, beside the allocation tests).

//go:build !race

package broker_test

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/internal/mqtttest"
)

// TestTrackerReadersStayAt8KiB connects trackers (MQTT 3.1.1 and 5, half
// each), has each send a QoS 1 ping through every hook the broker
// installs and read its PUBACK, and checks that the readers' stacks are at
// 8 KiB, with the garbage collector off throughout so that no stack
// shrinks: what `serve` keeps, since it runs with stack shrinking off.
// mochi's patch 0031 keeps the CONNECT handshake off the reader's stack,
// and patches 0023–0024 and hooks that work on the packet in place
// (OnPublishInPlace and its kind) keep a ping's frames within 8 KiB. A
// handshake on the reader or a hook that takes the packet by value again
// doubles every tracker's stack (docs/performance.md). The load harness's
// baseline, the engine and the rate limit off, has no publish hook at
// all: mochi 0032 keeps its pings within 8 KiB too. A subscriber to the
// raw pings has each routed on its tracker's reader, and one that does
// not keep up has them dropped and logged there: mochi 0033 passes the
// ping down that path by pointer and calls what is deep off it.
func TestTrackerReadersStayAt8KiB(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(*broker.Config)
		watch func(t *testing.T, addr string) // subscribes to the pings, if set
	}{
		{"serve", func(*broker.Config) {}, nil},
		{"engine and rate limit off", func(cfg *broker.Config) { cfg.EngineOff, cfg.PublishRate = true, 0 }, nil},
		{"a devices/# subscriber", func(*broker.Config) {}, func(t *testing.T, addr string) {
			subscribeWith(t, connect5(t, addr, "watcher"), paho.SubscribeOptions{Topic: "devices/#", QoS: 1}, 0)
		}},
		{"a devices/# subscriber that acknowledges nothing", func(cfg *broker.Config) { cfg.MaxInflight = 4 }, func(t *testing.T, addr string) {
			w := dialRaw(t, addr, 4)
			w.mustConnect("watcher", anonymous)
			if err := w.send(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}, PacketID: 1,
				Filters: packets.Subscriptions{{Filter: "devices/#", Qos: 1}}}); err != nil {
				t.Fatal(err)
			}
			w.expect(packets.Suback, "SUBACK")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.DataDir = ""
			tc.set(&cfg)
			srv := start(t, cfg)
			if tc.watch != nil {
				tc.watch(t, srv.MQTTAddr())
			}
			trackerReaderStack(t, srv)
		})
	}
}

// trackerReaderStack checks that srv's trackers' readers are at 8 KiB
// after a connect and a ping each, with nothing shrinking their stacks.
func trackerReaderStack(t *testing.T, srv *broker.Server) {
	const trackers = 256 // other goroutines' stacks change too: spread over many
	var before, after runtime.MemStats
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.ReadMemStats(&before)
	conns := make([]*rawConn, trackers)
	for i := range conns {
		conns[i] = dialRaw(t, srv.MQTTAddr(), byte(4+i%2))
		conns[i].mustConnect(mqtttest.ID(fmt.Sprintf("stack-%d", i)), anonymous)
	}
	for i, c := range conns {
		body := canonical(52.52, 13.40+float64(i)/1e4, nowMs())
		if err := c.publish(1, 1, fmt.Sprintf("devices/stack-%d/telemetry", i), body); err != nil {
			t.Fatal(err)
		}
		if ack := c.expect(packets.Puback, "PUBACK of the ping"); ack.ReasonCode != 0 {
			t.Fatalf("PUBACK %#x", ack.ReasonCode)
		}
	}
	time.Sleep(100 * time.Millisecond) // the last readers go back to waiting
	runtime.ReadMemStats(&after)
	perConn := (int64(after.StackInuse) - int64(before.StackInuse)) / trackers
	t.Logf("stack bytes per tracker after a ping: %d", perConn)
	if perConn > 8192+1024 {
		t.Errorf("stack bytes per tracker after a ping: %d, want 8 KiB (each reader's stack doubled to 16 KiB?)", perConn)
	}
}
