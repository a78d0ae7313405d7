package retainfollow

import (
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// TestStallAsksOnlyWhenBehindWithoutProgress: a source behind its
// stream is asked for a new watcher once it has received nothing for
// the stall time, not while it keeps receiving or has caught up, and
// asked again only after another stall time.
func TestStallAsksOnlyWhenBehindWithoutProgress(t *testing.T) {
	const after = 200 * time.Millisecond
	var s source
	s.init("test", metrics.NewSet())
	var st stall
	asked := func() bool {
		select {
		case <-s.replace:
			return true
		default:
			return false
		}
	}
	check := func(last uint64) bool { st.check(&s, last, after); return asked() }

	s.seq.Store(10)
	if check(10) || check(5) {
		t.Fatal("asked while caught up")
	}
	// Behind, but receiving: never asked.
	for i := range 5 {
		if check(20) {
			t.Fatalf("asked while receiving (step %d)", i)
		}
		s.seq.Add(1)
		time.Sleep(after / 2)
	}
	if got := s.lag.Load(); got != 20-14 {
		t.Errorf("lag %d, want 6", got)
	}
	// Behind and stuck: asked once the stall time has passed, not before.
	if check(20) {
		t.Fatal("asked at the first check of a stall")
	}
	time.Sleep(after)
	if !check(20) {
		t.Fatal("not asked after the stall time")
	}
	if check(20) {
		t.Fatal("asked again at once")
	}
	time.Sleep(after)
	if !check(20) {
		t.Fatal("not asked again after another stall time")
	}
	// Caught up: the lag is 0 and nothing is asked.
	s.seq.Store(20)
	if check(20) || s.lag.Load() != 0 {
		t.Fatalf("caught up: asked or lag %d", s.lag.Load())
	}
}
