package worker

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/partition"
	"github.com/edgefence/edgefence/worker/subjects"
)

// lapse records partition pt, stopped on its own because its lease ran
// out unrenewed, for reclaim.
func (w *Worker) lapse(n int, pt *partition.Partition) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.parts[n] == pt { // else the lease loop stopped it first, and recorded it
		w.lapseLocked(n, pt)
	}
}

// lapseLocked stops owned partition n, whose lease could not be renewed,
// and records it for reclaim. w.mu is held.
func (w *Worker) lapseLocked(n int, pt *partition.Partition) {
	w.lapsed[n] = pt
	pt.Cancel()
	w.forgetLocked(n)
}

// forgetLocked removes partition n from the owned ones. w.mu is held.
func (w *Worker) forgetLocked(n int) {
	delete(w.parts, n)
	delete(w.revs, n)
	w.m.CheckpointAt[n].Store(0)
	w.m.part[n].Store(nil)
}

// reclaim takes back, when the lease bucket answers again, the partitions
// whose lease lapsed while it did not: a lease is the worker's to take
// back while the bucket's latest value for it names the worker, or once it
// is gone. Only its owner writes a lease that names it, so no one else had
// it meanwhile, whatever revision a renewal that timed out but landed left
// it at. A NATS node's death makes the bucket unreachable for longer than
// a lease (its new leader is elected after 4 to 9 s), and without this a
// lapsed lease blocks every node until the bucket expires it, seconds
// later. It runs in every round that reaches the bucket, the first
// included, before anyone takes free partitions (rebalance), so the
// previous owner has them first.
func (w *Worker) reclaim(ctx context.Context) {
	w.mu.Lock()
	lapsed := w.lapsed
	w.lapsed = map[int]*partition.Partition{}
	w.mu.Unlock()
	for n, pt := range lapsed {
		select {
		case <-pt.Done():
		default:
			w.keepLapsed(n, pt) // still stopping: next round
			continue
		}
		asked := w.mono()
		rev, err := w.takeBack(ctx, subjects.LeaseKey(n))
		switch {
		case err == nil:
			w.log.Info("partition lease taken back after the lease bucket's outage", "partition", n)
			w.m.reclaimed.Inc()
			if next := pt.Resume(w.validUntil(asked)); next != nil {
				w.launch(n, next, rev)
			} else {
				w.run(n, rev, asked)
			}
		case cluster.Unanswered(err) || conflict(err):
			// Not answered, or written meanwhile (by whom, the next
			// round reads): try again.
			w.keepLapsed(n, pt)
		}
	}
}

// errTaken is a lapsed lease that another worker now holds.
var errTaken = errors.New("lease held by another worker")

// takeBack writes the lease key again for the worker if the bucket's latest
// value for it names the worker, or creates it if it is gone, and returns
// its new revision.
func (w *Worker) takeBack(ctx context.Context, key string) (uint64, error) {
	name := []byte(w.cfg.Name)
	e, err := w.conn.Leases.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return w.conn.Leases.Create(ctx, key, name)
	case err != nil:
		return 0, err
	case string(e.Value()) != w.cfg.Name:
		return 0, errTaken
	}
	return w.conn.Leases.Update(ctx, key, name, e.Revision())
}

// keepLapsed keeps partition n for the next round's reclaim, unless it was
// taken meanwhile.
func (w *Worker) keepLapsed(n int, pt *partition.Partition) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.parts[n] == nil {
		w.lapsed[n] = pt
	}
}

// conflict reports whether a lease write failed on its revision: the key
// was written (or expired) since. nats.go reports it as ErrKeyExists or
// ErrKeyRevisionMismatch, depending on the server's error code.
func conflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists)
}
