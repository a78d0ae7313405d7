package worker

import (
	"context"
	"errors"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/partition"
	"github.com/edgefence/edgefence/worker/subjects"
)

// lapse is a partition stopped because its lease could not be renewed:
// in time (the bucket unreachable), or on its revision (the bucket lost
// the key, or another owner has it, and then reclaim is refused). It
// keeps the lease's last revision, and the stopped partition, whose
// goroutine must end before it runs again.
type lapse struct {
	rev uint64
	pt  *partition.Partition
}

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
	w.lapsed[n] = lapse{rev: w.revs[n], pt: pt}
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
// whose lease lapsed while it did not: by the lease's last revision, which
// proves that no one took it meanwhile, or afresh if it expired. A NATS
// node's death makes the bucket unreachable for longer than a lease (its
// new leader is elected after 4 to 9 s), and without this a lapsed lease
// blocks every node until the bucket expires it, seconds later. It runs
// in every round that reaches the bucket, the first included, before
// anyone takes free partitions (rebalance), so the previous owner has
// them first.
func (w *Worker) reclaim(ctx context.Context) {
	w.mu.Lock()
	lapsed := w.lapsed
	w.lapsed = map[int]lapse{}
	w.mu.Unlock()
	for n, l := range lapsed {
		select {
		case <-l.pt.Done():
		default:
			w.keepLapsed(n, l) // still stopping: next round
			continue
		}
		asked := w.mono()
		key, name := subjects.LeaseKey(n), []byte(w.cfg.Name)
		rev, err := w.conn.Leases.Update(ctx, key, name, l.rev)
		if conflict(err) {
			// Expired meanwhile (or another's, and then this fails too).
			rev, err = w.conn.Leases.Create(ctx, key, name)
		}
		switch {
		case err == nil:
			w.log.Info("partition lease taken back after the lease bucket's outage", "partition", n)
			w.m.reclaimed.Inc()
			w.run(n, rev, asked)
		case cluster.Unanswered(err):
			w.keepLapsed(n, l)
		}
	}
}

// keepLapsed keeps partition n for the next round's reclaim, unless it was
// taken meanwhile.
func (w *Worker) keepLapsed(n int, l lapse) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.parts[n] == nil {
		w.lapsed[n] = l
	}
}

// conflict reports whether a lease write failed on its revision: the key
// was written (or expired) since. nats.go reports it as ErrKeyExists or
// ErrKeyRevisionMismatch, depending on the server's error code.
func conflict(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists)
}
