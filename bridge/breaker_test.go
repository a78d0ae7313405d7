package bridge

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// The circuit breaker over a real Mosquitto: a proxy holds the bridge's
// publishes, as an overloaded broker that stops acknowledging would, so
// transitions pile up in the queue. At --max-queued the bridge stops
// acknowledging telemetry: it holds at most --receive-maximum unacked
// publishes and the broker keeps the rest. When publishes flow again, the
// queue drains, and every held ping is taken and acknowledged, in order.
func TestCircuitBreaker(t *testing.T) {
	m := startMosquitto(t)
	p := startProxy(t, m.addr())
	cfg := testConfig(t, p.url())
	cfg.MaxQueued = 2
	cfg.ReceiveMaximum = 3
	cfg.Engine.Hold = 20 * time.Millisecond
	b := startBridge(t, cfg)
	o := observe(t, m.url(), "", "", "geofence/#")
	tr := connectTracker(t, m.addr(), "", "")
	base := time.Now().UnixMilli() - 60_000
	var want []string
	ping := func(k int) {
		lat, lon, typ := museumLat, museumLon, "ENTER"
		if k%2 == 1 {
			lat, lon, typ = outLat, outLon, "EXIT"
		}
		// A device each: its transition is published at once, not behind
		// another of the same device.
		d := fmt.Sprintf("d%d", k)
		if k%2 == 1 {
			d = fmt.Sprintf("d%d", k-1)
		}
		tr.ping(d, lat, lon, base+int64(k)*1000)
		want = append(want, fmt.Sprintf("%s zone-museumsinsel %s %d", d, typ, base+int64(k)*1000))
	}

	acks0 := p.acks.Load() // the restore connection's, of the sync marker
	p.setHold(true)
	ping(0) // d0 ENTER
	ping(2) // d2 ENTER
	eventually(t, "two transitions queued and held at the proxy, two pings acknowledged", func() bool {
		return b.Queued() == 2 && p.heldCount() == 2 && p.acks.Load()-acks0 == 2
	})
	// The queue is at --max-queued: the next ping opens the breaker.
	const more = 6
	for k := 4; k < 4+2*more; k += 2 {
		ping(k) // the broker acknowledges the tracker: it has the ping
	}
	eventually(t, "the breaker to open with the receive maximum unacknowledged", func() bool {
		return b.breakerOpen.Load() && b.inbox.unacked.Load() == int64(cfg.ReceiveMaximum)
	})
	if n := p.acks.Load() - acks0; n != 2 {
		t.Fatalf("bridge acknowledged %d telemetry publishes with the breaker open, want still 2", n)
	}
	// Two taken, and the third decoded and waiting at the breaker.
	if n := b.hm.Received.Get(); n != 3 {
		t.Errorf("bridge read %d pings with the breaker open, want 3", n)
	}
	t.Logf("breaker open: %d transitions queued, %d publishes unacknowledged, %d held by the broker",
		b.Queued(), b.inbox.unacked.Load(), more-int(cfg.ReceiveMaximum))

	p.setHold(false)
	got := o.waitTransitions("geofence", len(want))
	eventually(t, "every ping acknowledged", func() bool { return p.acks.Load()-acks0 == 2+more && b.inbox.unacked.Load() == 0 })
	if !slices.Equal(sorted(got), sorted(want)) {
		t.Errorf("transitions:\n got  %q\n want %q", sorted(got), sorted(want))
	}
	if b.breakerOpen.Load() {
		t.Error("breaker still open with an empty queue")
	}
	if n := b.m.breakerTrips.Get(); n == 0 {
		t.Error("edgefence_bridge_breaker_trips_total is 0")
	}
}
