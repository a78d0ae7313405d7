package retainfollow

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/subjects"
)

// followBucket delivers the retained bucket's current values to the
// sink, then follows its changes until ctx is done: a value written is
// the history's to deliver (in its device's order), but for a write
// whose record came before the history's start (settle); a key deleted
// (a fence removed) is delivered here. A watcher that ends, fails or
// stalls (the watchdog) is replaced by one resuming after the last
// revision seen.
func (f *Follower) followBucket(ctx context.Context) {
	defer f.wg.Done()
	var once sync.Once
	s := &f.bucket
	for ctx.Err() == nil {
		var opts []jetstream.WatchOpt
		if rev := s.seq.Load(); rev > 0 {
			opts = append(opts, jetstream.ResumeFromRevision(rev+1))
		}
		w, err := f.kv.WatchAll(ctx, opts...)
		if err != nil {
			f.replaced(s, "watch failed", err)
			pause(ctx, 500*time.Millisecond)
			continue
		}
		reason := f.drainWatcher(ctx, w, func() { once.Do(f.markSynced) })
		_ = w.Stop()
		// Its callback may be blocked on a full channel: read it until
		// the closed subscription closes it.
		for range w.Updates() {
		}
		if ctx.Err() == nil {
			f.replaced(s, reason, nil)
		}
	}
}

// drainWatcher delivers w's entries until ctx is done, w ends or the
// watchdog asks for a new one; it returns why it stopped.
func (f *Follower) drainWatcher(ctx context.Context, w jetstream.KeyWatcher, synced func()) string {
	s := &f.bucket
	for {
		select {
		case <-ctx.Done():
			return "closing"
		case why := <-s.replace:
			return why
		case e, ok := <-w.Updates():
			if !ok {
				return "watcher ended"
			}
			if e == nil { // the current values are all delivered
				synced()
				continue
			}
			if e.Revision() <= s.seq.Load() {
				continue // delivered by the watcher before
			}
			topic, err := subjects.RetainedTopic(e.Key())
			switch {
			case err != nil:
				f.o.Log.Warn("retained bucket key names no topic: skipped", "key", e.Key(), "error", err)
			case e.Operation() != jetstream.KeyValuePut:
				f.retain(topic, nil)
			case !isSynced(f.synced):
				f.retain(topic, e.Value())
			default:
				f.bucketWrite(topic, e.Value())
			}
			s.seq.Store(e.Revision())
			s.updates.Inc()
		}
	}
}

// isSynced reports whether ch, the follower's synced, is closed.
func isSynced(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
