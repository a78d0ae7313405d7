package bridge

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgefence/edgefence/bridge/queue"
)

// queueFiles lists the entries in a queue directory.
func queueFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+queue.FileExt))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A graceful restart: Close flushes the reorder buffers and drains the
// queue before it returns; pings published while no bridge runs wait in
// the persistent session; the next bridge restores the state from the
// retained transitions, so it repeats no ENTER, and a device that left
// meanwhile gets its EXIT.
func TestRestartRestoresState(t *testing.T) {
	m := startMosquitto(t)
	cfg := testConfig(t, m.url())
	cfg.Engine.Hold = 5 * time.Second // the ENTER can only come from Close's flush
	b1 := startBridge(t, cfg)
	o := observe(t, m.url(), "", "", "geofence/#", "edgefence/late/#")
	tr := connectTracker(t, m.addr(), "", "")
	base := time.Now().UnixMilli() - 60_000

	tr.ping("truck-1", museumLat, museumLon, base+1000)
	eventually(t, "the bridge to take the ping", func() bool { return b1.engine.Stats().Buffered == 1 })
	closeBridge(t, b1)
	if files := queueFiles(t, cfg.QueueDir); len(files) != 0 {
		t.Fatalf("queue after a graceful Close: %v, want it drained", files)
	}
	if got := o.waitTransitions("geofence", 1); got[0] != fmt.Sprintf("truck-1 zone-museumsinsel ENTER %d", base+1000) {
		t.Fatalf("flushed at Close: %v", got)
	}

	// No bridge runs: the broker keeps these for the bridge's session.
	tr.ping("truck-1", museumLat, museumLon, base+1500) // still inside: no ENTER again
	tr.ping("truck-1", outLat, outLon, base+2000)       // left: EXIT

	cfg.Engine.Hold = 100 * time.Millisecond
	b2 := startBridge(t, cfg)
	if n := b2.restored.Load(); n != 1 {
		t.Errorf("restored %d states, want 1", n)
	}
	got := o.waitTransitions("geofence", 2)
	want := []string{
		fmt.Sprintf("truck-1 zone-museumsinsel ENTER %d", base+1000),
		fmt.Sprintf("truck-1 zone-museumsinsel EXIT %d", base+2000),
	}
	// A device's pings are evaluated in order, so a repeated ENTER caused
	// by the ping at +1500 would have come before the EXIT.
	if !slices.Equal(got, want) {
		t.Fatalf("transitions across the restart:\n got  %q\n want %q", got, want)
	}
	// The only ping that can come twice is the one b1 took: if its PUBACK
	// had not left when b1 disconnected, the broker sends it again, and
	// behind the restored watermark it is late, not a second ENTER.
	for _, l := range o.messages("edgefence/late/") {
		if !strings.Contains(string(l.payload), fmt.Sprintf(`"ts":%d,`, base+1000)) {
			t.Errorf("late report of a ping that was not redelivered: %s", l.payload)
		}
		t.Logf("redelivered and late: %s", l.payload)
	}
}

// Upstream killed (SIGKILL) and restarted mid-stream: the transitions the
// reorder buffers release while it is away are queued and published when
// it returns; the whole log equals the one the same stream produces
// without the outage, each transition exactly once.
func TestUpstreamRestart(t *testing.T) {
	mosquittoBin(t)
	base := time.Now().UnixMilli() - 10*60_000
	var logs [2][]string
	var wg sync.WaitGroup
	for i, outage := range []bool{false, true} {
		wg.Add(1)
		t.Run(fmt.Sprintf("outage=%v", outage), func(t *testing.T) {
			t.Parallel()
			defer wg.Done()
			logs[i] = upstreamStream(t, base, outage)
		})
	}
	t.Cleanup(func() {
		// After both subtests: parallel subtests run when this function
		// has returned.
		wg.Wait()
		if t.Failed() {
			return
		}
		t.Logf("without outage: %d transitions; with: %d", len(logs[0]), len(logs[1]))
		if !slices.Equal(sorted(logs[0]), sorted(logs[1])) {
			t.Errorf("the outage changed the transitions:\n without %q\n with    %q", sorted(logs[0]), sorted(logs[1]))
		}
	})
}

// upstreamStream runs four devices through six rounds of pings, each
// crossing the museum zone's edge, against its own Mosquitto, and returns
// the transitions published. With outage, Mosquitto is killed after the
// fourth round has reached the bridge and before the reorder buffers
// release it, and restarted from its last saved database.
func upstreamStream(t *testing.T, base int64, outage bool) []string {
	m := startMosquitto(t)
	cfg := testConfig(t, m.url())
	cfg.Engine.Hold = 1500 * time.Millisecond // ≫ the time to kill the broker
	b := startBridge(t, cfg)
	o := observe(t, m.url(), "", "", "geofence/#")
	devices := []string{"d0", "d1", "d2", "d3"}
	var want []string
	round := func(tr *tracker, k int) {
		for _, d := range devices {
			lat, lon, typ := museumLat, museumLon, "ENTER"
			if k%2 == 1 {
				lat, lon, typ = outLat, outLon, "EXIT"
			}
			ts := base + int64(k)*1000
			tr.ping(d, lat, lon, ts)
			want = append(want, fmt.Sprintf("%s zone-museumsinsel %s %d", d, typ, ts))
		}
	}
	tr := connectTracker(t, m.addr(), "", "")
	for k := range 3 {
		round(tr, k)
	}
	o.waitTransitions("geofence", len(want))
	eventually(t, "the queue to drain", func() bool { return b.Queued() == 0 })
	if outage {
		// Quiescent: nothing in flight. What the broker keeps across the
		// kill is this database (sessions, retained transitions).
		m.save()
	}
	round(tr, 3)
	tr.close()
	eventually(t, "the bridge to take round 3", func() bool { return b.hm.Received.Get() == 16 })
	if outage {
		m.kill()
		eventually(t, "round 3's EXITs, decided with the broker away, to be queued", func() bool { return b.Queued() == len(devices) })
		if b.connected.Load() {
			t.Error("bridge still connected to a killed broker")
		}
		m.start()
	}
	o.waitTransitions("geofence", len(want))
	eventually(t, "the bridge to reconnect and drain", func() bool { return b.connected.Load() && b.Queued() == 0 })
	tr = connectTracker(t, m.addr(), "", "")
	round(tr, 4)
	round(tr, 5)
	o.waitTransitions("geofence", len(want))
	// A marker after everything: by the time its transition (decided a
	// hold after it) arrives, a duplicate already on its way would have.
	tr.ping("zz-marker", museumLat, museumLon, base)
	got := o.waitTransitions("geofence", len(want)+1)
	got = slices.DeleteFunc(got, func(s string) bool { return strings.HasPrefix(s, "zz-marker ") })
	if !slices.Equal(sorted(got), sorted(want)) {
		t.Errorf("transitions:\n got  %q\n want %q", sorted(got), sorted(want))
	}
	return got
}

// The bridge crashes with transitions in its queue that upstream never
// acknowledged (a proxy holds its publishes), and pings arrive while it is
// down: the next bridge publishes the queued transitions, restores the
// state from the retained ones plus the queue, and takes the pings from
// its session. Nothing is lost, no ENTER repeats.
func TestBridgeCrash(t *testing.T) {
	m := startMosquitto(t)
	p := startProxy(t, m.addr())
	cfg := testConfig(t, p.url())
	b1, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-b1.Ready():
	case <-time.After(wait):
		t.Fatal("bridge not ready")
	}
	o := observe(t, m.url(), "", "", "geofence/#")
	tr := connectTracker(t, m.addr(), "", "")
	base := time.Now().UnixMilli() - 60_000
	devices := []string{"d0", "d1", "d2"}
	var want []string
	for _, d := range devices {
		tr.ping(d, museumLat, museumLon, base+1000)
		want = append(want, fmt.Sprintf("%s zone-museumsinsel ENTER %d", d, base+1000))
	}
	o.waitTransitions("geofence", len(want))
	eventually(t, "the queue to drain", func() bool { return b1.Queued() == 0 })

	p.setHold(true)
	for _, d := range devices {
		tr.ping(d, outLat, outLon, base+2000)
		want = append(want, fmt.Sprintf("%s zone-museumsinsel EXIT %d", d, base+2000))
	}
	eventually(t, "the EXITs to be queued, published and held", func() bool {
		return b1.Queued() == len(devices) && p.heldCount() == len(devices) && b1.engine.Stats().Buffered == 0
	})
	b1.kill()
	if files := queueFiles(t, cfg.QueueDir); len(files) != len(devices) {
		t.Fatalf("queue after the crash: %d files, want %d", len(files), len(devices))
	}
	eventually(t, "the held publishes to die with the connection", func() bool { return p.heldCount() == 0 })
	p.setHold(false)

	// While no bridge runs.
	tr.ping("d0", museumLat, museumLon, base+3000)
	tr.ping("d1", museumLat, museumLon, base+3000)
	want = append(want,
		fmt.Sprintf("d0 zone-museumsinsel ENTER %d", base+3000),
		fmt.Sprintf("d1 zone-museumsinsel ENTER %d", base+3000))

	b2 := startBridge(t, cfg)
	o.waitTransitions("geofence", len(want))
	eventually(t, "the queue to drain", func() bool { return b2.Queued() == 0 })
	tr.ping("zz-marker", museumLat, museumLon, base)
	got := o.waitTransitions("geofence", len(want)+1)
	got = slices.DeleteFunc(got, func(s string) bool { return strings.HasPrefix(s, "zz-marker ") })
	if !slices.Equal(sorted(got), sorted(want)) {
		t.Fatalf("transitions across the crash:\n got  %q\n want %q", sorted(got), sorted(want))
	}
	// Per device, in the order decided.
	for _, d := range devices {
		var seq []string
		for _, s := range got {
			if strings.HasPrefix(s, d+" ") {
				seq = append(seq, s)
			}
		}
		if !slices.IsSortedFunc(seq, func(a, b string) int {
			return strings.Compare(a[strings.LastIndex(a, " "):], b[strings.LastIndex(b, " "):])
		}) {
			t.Errorf("%s out of order: %q", d, seq)
		}
	}
	if _, err := os.Stat(cfg.QueueDir); err != nil {
		t.Fatal(err)
	}
}

// Upstream restarts without its state (killed before it saved anything):
// the bridge's session is gone, and with it paho's record of the publish
// that was awaiting a PUBACK, which paho then never answers. The bridge
// publishes it again on the new session, subscribes to the telemetry
// again, and carries on: each transition once.
func TestUpstreamLosesSession(t *testing.T) {
	m := startMosquitto(t)
	p := startProxy(t, m.addr())
	b := startBridge(t, testConfig(t, p.url()))
	o := observe(t, m.url(), "", "", "geofence/#")
	tr := connectTracker(t, m.addr(), "", "")
	base := time.Now().UnixMilli() - 60_000
	want := []string{fmt.Sprintf("d0 zone-museumsinsel ENTER %d", base)}
	tr.ping("d0", museumLat, museumLon, base)
	o.waitTransitions("geofence", 1)

	p.setHold(true)
	tr.ping("d0", outLat, outLon, base+1000)
	want = append(want, fmt.Sprintf("d0 zone-museumsinsel EXIT %d", base+1000))
	eventually(t, "the EXIT published and held", func() bool { return p.heldCount() == 1 })
	connects, subscribed := b.m.connects.Get(), b.subscribed.Load()
	m.kill() // nothing saved: the broker comes back empty
	eventually(t, "the held EXIT to be lost with the connection", func() bool { return p.heldCount() == 0 })
	m.start()
	// The observer lost its session too: let it subscribe again before
	// anything is let through.
	eventually(t, "the observer and the bridge to reconnect, the EXIT published again", func() bool {
		return o.subs.Load() == 2 && b.m.connects.Get() > connects && p.heldCount() == 1
	})
	p.setHold(false)
	o.waitTransitions("geofence", 2)
	eventually(t, "the queue to drain", func() bool { return b.Queued() == 0 })

	// Telemetry flows again: the bridge subscribed again on the new session.
	eventually(t, "the bridge to subscribe again", func() bool { return b.subscribed.Load() > subscribed })
	tr = connectTracker(t, m.addr(), "", "")
	tr.ping("d0", museumLat, museumLon, base+2000)
	want = append(want, fmt.Sprintf("d0 zone-museumsinsel ENTER %d", base+2000))
	if got := o.waitTransitions("geofence", 3); !slices.Equal(got, want) {
		t.Fatalf("transitions:\n got  %q\n want %q", got, want)
	}
}
