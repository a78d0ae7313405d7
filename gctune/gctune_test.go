package gctune

import (
	"runtime/debug"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const mb = 1 << 20

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		live, stacks, globals, headroom uint64
		want                            int
	}{
		{50 * mb, 7 * mb, 0, 128 * mb, 225},       // 1,000 trackers: GC waits for 128 MB, not 57
		{190 * mb, 369 * mb, 1, 128 * mb, 100},    // 10,000 trackers: stacks already give GOGC=100 more than enough
		{5 * mb, 1 * mb, 0, 128 * mb, MaxPercent}, // an idle broker grows by 4 × 6 MB at most
		{0, 0, 0, 128 * mb, MaxPercent},
		{64 * mb, 0, 0, 128 * mb, 200},
		{64 * mb, 0, 0, 0, 100},
	} {
		if got := Percent(tc.live, tc.stacks, tc.globals, tc.headroom); got != tc.want {
			t.Errorf("Percent(live %d MB, stacks %d MB, headroom %d MB) = %d, want %d",
				tc.live/mb, tc.stacks/mb, tc.headroom/mb, got, tc.want)
		}
	}
}

// The goal the tuner sets gives at least the headroom, within the bounds.
func TestPercentGivesTheHeadroom(t *testing.T) {
	for live := uint64(1 * mb); live < 2048*mb; live = live*3/2 + 1 {
		p := Percent(live, live/4, 0, 128*mb)
		growth := (live + live/4) * uint64(p) / 100
		if p < 100 || p > MaxPercent || (p < MaxPercent && growth < 128*mb) {
			t.Fatalf("live %d MB: GOGC %d allows %d MB of growth", live/mb, p, growth/mb)
		}
	}
}

func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// A running tuner sets GOGC for this small test heap at once, and Stop
// puts back what it found.
func TestTunerSetsAndRestoresGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	tu := Start(1<<40, time.Hour)
	if got := gcPercent(); got != MaxPercent || tu.Percent() != MaxPercent {
		t.Fatalf("GOGC %d (tuner says %d), want %d for a small heap and a huge headroom", got, tu.Percent(), MaxPercent)
	}
	tu.Stop()
	if got := gcPercent(); got != 77 {
		t.Fatalf("after Stop GOGC is %d, want the 77 found at Start", got)
	}

	tu = Start(1, time.Hour) // no headroom wanted: Go's default
	defer tu.Stop()
	if got := gcPercent(); got != 100 {
		t.Fatalf("GOGC %d, want 100", got)
	}
}
