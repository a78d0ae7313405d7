package worker

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/edgefence/edgefence/worker/partition"
)

// TestStalledPartitionGivenUpOnlyWhenRefused: the watchdog's decision on
// a partition that stays stalled, its position unchanged with messages
// waiting. Half a lease after it asked for a new consumer it gives the
// partition up only when the last try was refused; while a try is under
// way (unanswered as the cluster elects its leaders) it waits; and when
// the new consumer was made and is silent too, it asks for another.
// Before, a partition was given up whenever its last finished try had
// not gone unanswered, so also while its first try was still under way:
// the node-kill test saw two partitions given up so during a stream
// leader's move, each then taken again from its checkpoint.
func TestStalledPartitionGivenUpOnlyWhenRefused(t *testing.T) {
	w := &Worker{cfg: Config{Lease: 2 * time.Second}, log: slog.New(slog.DiscardHandler),
		start: time.Now().Add(-time.Minute)}
	w.m = newWorkerMetrics(metrics.NewSet(), w)
	for _, tc := range []struct {
		name                     string
		askedAgo                 time.Duration
		refused, replacing       bool
		wantGiveUp, wantNewAsked bool
	}{
		{name: "asked recently", askedAgo: 100 * time.Millisecond},
		{name: "asked recently, refused", askedAgo: 100 * time.Millisecond, refused: true},
		{name: "refused", askedAgo: 2 * time.Second, refused: true, wantGiveUp: true},
		{name: "a try under way", askedAgo: 2 * time.Second, replacing: true},
		{name: "made and silent", askedAgo: 2 * time.Second, wantNewAsked: true},
	} {
		pt := partition.New(&partition.Owner{Log: w.log, Mono: w.mono}, 0, 0)
		pt.Progress.Waiting.Store(true)
		pt.Progress.Refused.Store(tc.refused)
		pt.Progress.Replacing.Store(tc.replacing)
		now := w.mono()
		st := &watchState{pos: 10, behind: now - int64(10*time.Second), stalled: now - int64(5*time.Second),
			asked: now - int64(tc.askedAgo)}
		asked := st.asked
		giveUp := w.stalled(context.Background(), 0, pt, st, 10, 3, 11)
		newAsked := pt.ReplaceAsked()
		if giveUp != tc.wantGiveUp || newAsked != tc.wantNewAsked {
			t.Errorf("%s: given up %v, another consumer asked for %v; want %v, %v", tc.name, giveUp, newAsked, tc.wantGiveUp, tc.wantNewAsked)
		}
		if newAsked && st.asked == asked {
			t.Errorf("%s: asked for another consumer without noting when", tc.name)
		}
	}
}
