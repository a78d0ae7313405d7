package retainfollow

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// watchdog compares, every quarter of StallAfter, how far each followed
// stream goes with what the follower has received: one that stays
// behind for StallAfter without receiving anything has a watcher that
// stopped without saying so (an ordered consumer re-created again and
// again against a replica that is gone, issue 34), and is asked to
// replace it. Never silent: the replacement is logged and counted.
func (f *Follower) watchdog(ctx context.Context) {
	defer f.wg.Done()
	t := time.NewTicker(f.o.StallAfter / 4)
	defer t.Stop()
	var bucket, history stall
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c, cancel := context.WithTimeout(ctx, f.o.StallAfter/4)
		f.settle(c)
		if st, err := f.kv.Status(c); err == nil {
			if bs, ok := st.(*jetstream.KeyValueBucketStatus); ok {
				bucket.check(&f.bucket, bs.StreamInfo().State.LastSeq, f.o.StallAfter)
			}
		}
		if hist := f.histStream(); hist != nil {
			if info, err := hist.Info(c); err == nil {
				history.check(&f.history, info.State.LastSeq, f.o.StallAfter)
			}
		}
		cancel()
	}
}

// stall is the watchdog's view of one source: since when it has been
// behind at the same sequence.
type stall struct {
	at    uint64
	since time.Time
}

// check records that the stream's last sequence is last and asks s for
// a new watcher once it has been behind at one sequence for after.
func (st *stall) check(s *source, last uint64, after time.Duration) {
	seq := s.seq.Load()
	if last <= seq {
		s.lag.Store(0)
		st.since = time.Time{}
		return
	}
	s.lag.Store(int64(last - seq))
	if st.since.IsZero() || st.at != seq {
		st.at, st.since = seq, time.Now()
		return
	}
	if time.Since(st.since) >= after {
		st.since = time.Now()
		s.ask("no progress while behind the stream")
	}
}
