package clock_test

import (
	"testing"
	"time"
)

// bootPing sends a cold-booted tracker's ping: its stamp counts from
// epoch zero (boot is its count, the time since it booted), received at
// the server's wall clock wall (from w0). It returns the ping's place on
// the device's timeline, from w0.
func (d *device) bootPing(count, wall time.Duration) time.Duration {
	w := w0 + int64(wall)
	return time.Duration(d.m.BootTimeline(int64(count), w, int64(wall), skew) - w0)
}

// "A stamp before the floor is ... ordered by the tracker's counting
// clock: anchored at the model's clock": its pings keep their spacing,
// whatever their transit delay, from the first, anchored at the device's
// clock as the model has it.
func TestColdBootIsOrderedByItsCount(t *testing.T) {
	d := newDevice(3 * time.Second)
	d.learn(t) // +1s … +4s, offset 3 s
	if got := d.bootPing(10*time.Second, 10*time.Second); got != 13*time.Second {
		t.Fatalf("the boot's first ping at %v, want at the model's clock, 13s", got)
	}
	// Then every second by its count, arriving with delays up to 1.5 s.
	for i, delay := range []time.Duration{400, 1500, 0, 900} {
		count := time.Duration(11+i) * time.Second
		arr := 10*time.Second + time.Duration(i+1)*time.Second + delay*time.Millisecond
		want := 13*time.Second + time.Duration(i+1)*time.Second
		if got := d.bootPing(count, arr); got != want {
			t.Fatalf("count %v arriving at %v: at %v, want %v", count, arr, got, want)
		}
	}
}

// The anchor is "refined by the minimum-delay filter": a count whose
// first ping came late is anchored again by a ping that came faster.
func TestColdBootAnchorRefinedByAFasterPing(t *testing.T) {
	d := newDevice(3 * time.Second)
	d.learn(t)
	if got := d.bootPing(10*time.Second, 11*time.Second); got != 14*time.Second { // 1 s late
		t.Fatalf("first ping at %v, want 14s", got)
	}
	if got := d.bootPing(12*time.Second, 12*time.Second+time.Millisecond); got != 15*time.Second+time.Millisecond {
		t.Fatalf("a ping 1 ms late: at %v, want at the model's clock, 15.001s", got)
	}
	if got := d.bootPing(13*time.Second, 13*time.Second+500*time.Millisecond); got != 16*time.Second+time.Millisecond {
		t.Fatalf("the next: at %v, want 16.001s (by the count from the closer anchor)", got)
	}
}

// "A count that runs ahead is a new boot, and so is one that, outside a
// burst, falls back more than the skew tolerance, unless it fell back no
// more than a delayed ping would (10 s) and the count is live."
func TestColdBootCountThatRestartsIsANewBoot(t *testing.T) {
	t.Run("restarted after a minute", func(t *testing.T) {
		d := newDevice(0)
		d.learn(t)
		for s := range 61 {
			d.bootPing(time.Duration(s)*time.Second, 10*time.Second+time.Duration(s)*time.Second)
		}
		// Booted again: the count starts from zero 2 minutes later.
		if got := d.bootPing(0, 130*time.Second); got != 130*time.Second {
			t.Fatalf("a count from zero again, 70 s after the last: at %v, want anchored anew at 130s", got)
		}
	})
	t.Run("ran ahead", func(t *testing.T) {
		d := newDevice(0)
		d.learn(t)
		d.bootPing(0, 10*time.Second)
		if got := d.bootPing(time.Minute, 11*time.Second); got != 11*time.Second {
			t.Fatalf("a count a minute ahead of the clock: at %v, want anchored anew at 11s", got)
		}
	})
	t.Run("a delayed ping of the same count", func(t *testing.T) {
		d := newDevice(0)
		d.learn(t)
		for s := range 21 {
			d.bootPing(time.Duration(s)*time.Second, 10*time.Second+time.Duration(s)*time.Second)
		}
		// Count 12 s, 8 s behind the latest (count 20 s), arriving at 31 s:
		// a ping the network held back, not a boot.
		if got := d.bootPing(12*time.Second, 31*time.Second); got != 22*time.Second {
			t.Fatalf("a delayed ping of the count: at %v, want by its count at 22s", got)
		}
	})
}

// "A count that begins a burst is anchored provisionally and moved beside
// the first trusted ping after it": a flush that begins with a cold
// boot's pings puts them just before the trusted backlog ping that
// follows them, in the burst's direction.
func TestColdBootBeginningABurstIsMovedBesideItsNeighbour(t *testing.T) {
	d := newDevice(0)
	d.learn(t) // +1s … +4s
	// A minute later the flush: two counting pings back to back ...
	arr := 64 * time.Second
	first := d.bootPing(100*time.Second, arr)
	second := d.bootPing(101*time.Second, arr+10*time.Millisecond)
	if first != arr || second != arr+time.Second {
		t.Fatalf("provisional anchors %v, %v; want %v, %v", first, second, arr, arr+time.Second)
	}
	// ... then a trusted backlog ping fixed 30 s ago, back to back.
	event := w0 + int64(34*time.Second)
	delta, ok := d.m.Reanchor(event, w0+int64(arr+20*time.Millisecond), int64(arr+20*time.Millisecond))
	if !ok {
		t.Fatal("the burst's counting pings were not moved")
	}
	// Moved so that the count's last ping lies one step (1 s) before it.
	if got, want := second+time.Duration(delta), 33*time.Second; got != want {
		t.Fatalf("the count's last ping moved to %v, want %v (one count step before the backlog ping)", got, want)
	}
	if arrival := d.m.BootArrival(); arrival != int64(arr) {
		t.Fatalf("the pings to move are those since %v, want %v", time.Duration(arrival), arr)
	}
}
