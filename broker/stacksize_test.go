// The race detector's instrumentation makes every frame larger, so the
// stack sizes this test checks are those of a build without it (CI runs
// it so, beside the allocation tests).

//go:build !race

package broker_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/internal/mqtttest"
)

// TestTrackerReadersStayAt8KiB connects trackers (MQTT 3.1.1 and 5, half
// each), lets their idle readers' stacks shrink, has each send a QoS 1
// ping through every hook the broker installs and read its PUBACK, and
// checks that the readers' stacks stay at 8 KiB: mochi's patches 0023
// and 0024, and hooks that work on the packet in place (OnPublishInPlace
// and its kind), keep a ping's frames within that. A hook that takes the
// packet by value again doubles every tracker's stack (docs/performance.md).
func TestTrackerReadersStayAt8KiB(t *testing.T) {
	const trackers = 256 // other goroutines' stacks change too: spread over many
	cfg := testConfig(t)
	cfg.DataDir = ""
	srv := start(t, cfg)
	var before, after runtime.MemStats
	gc2 := func() { runtime.GC(); runtime.GC() }
	gc2()
	runtime.ReadMemStats(&before)
	conns := make([]*rawConn, trackers)
	for i := range conns {
		conns[i] = dialRaw(t, srv.MQTTAddr(), byte(4+i%2))
		conns[i].mustConnect(mqtttest.ID(fmt.Sprintf("stack-%d", i)), anonymous)
	}
	time.Sleep(100 * time.Millisecond) // the last readers go back to waiting
	gc2()                              // each collection halves a stack at most
	gc2()
	for i, c := range conns {
		body := canonical(52.52, 13.40+float64(i)/1e4, nowMs())
		if err := c.publish(1, 1, fmt.Sprintf("devices/stack-%d/telemetry", i), body); err != nil {
			t.Fatal(err)
		}
		if ack := c.expect(packets.Puback, "PUBACK of the ping"); ack.ReasonCode != 0 {
			t.Fatalf("PUBACK %#x", ack.ReasonCode)
		}
	}
	runtime.ReadMemStats(&after)
	perConn := (int64(after.StackInuse) - int64(before.StackInuse)) / trackers
	t.Logf("stack bytes per tracker after a ping: %d", perConn)
	if perConn > 8192+1024 {
		t.Errorf("stack bytes per tracker after a ping: %d, want 8 KiB (each reader's stack doubled to 16 KiB?)", perConn)
	}
}
