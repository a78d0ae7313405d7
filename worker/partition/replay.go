package partition

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/checkpoint"
	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/subjects"
)

// A replay is safe while JetStream still de-duplicates what it re-publishes:
// the outputs of the messages after a checkpoint were recorded in the
// history stream by the owner that applied them, and the replay sends the
// same ids again, which the stream drops only within --dedup-window of the
// original record. A checkpoint that old (an owner that could not save for
// that long, a restored backup) would publish them a second time, on the
// history stream and to the dashboards. The first record after the
// checkpoint says whether that can happen: nothing after it (no owner
// applied anything since, as after a whole-cluster outage) is safe however
// old the checkpoint is.

// historySeq returns the sequence of the partition's newest history
// record (0: none), which a checkpoint keeps: every record after it was
// made by messages after the checkpoint.
func (pt *Partition) historySeq(ctx context.Context) (uint64, error) {
	n := pt.n
	m, err := cluster.LastMsg(ctx, pt.o.Conn.History, subjects.History(n))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("last history record of partition %d: %w", n, err)
	}
	return m.Sequence, nil
}

// firstRecordAfter returns the stream time of the partition's first
// history record after sequence seq, or the zero time if there is none.
func (pt *Partition) firstRecordAfter(ctx context.Context, seq uint64) (time.Time, error) {
	n := pt.n
	m, err := pt.o.Conn.History.GetMsg(ctx, seq+1, jetstream.WithGetMsgSubject(subjects.History(n)))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("history of partition %d after %d: %w", n, seq, err)
	}
	return m.Time, nil
}

// checkReplay reports, as an error in the log and in
// edgefence_worker_stale_replays_total, a replay from ck that will publish
// outputs again which the history stream no longer de-duplicates. The
// replay goes on: refusing it would leave the partition's devices
// unevaluated until someone acts, and the only ways on are this replay or
// dropping the checkpoint and the devices' state with it. The repeats are
// the outputs of the messages between the checkpoint and the previous
// owner's end; the retained state ends as the last of them.
func (pt *Partition) checkReplay(ctx context.Context, ck *checkpoint.State) {
	o, n := pt.o, pt.n
	first, err := pt.firstRecordAfter(ctx, ck.HistSeq)
	if err != nil {
		o.Log.Warn("cannot tell whether the replay is within the duplicate window", "partition", n, "error", err)
		return
	}
	// A record this close to the window's end may leave it during the
	// replay: a lease's worth of margin.
	if first.IsZero() || time.Since(first) < o.Config.DedupWindow-o.Config.Lease {
		return
	}
	o.Metrics.StaleReplays.Inc()
	o.Log.Error("replay from a checkpoint older than the duplicate window: outputs recorded since it will be published again",
		"partition", n, "checkpoint_seq", ck.Seq, "first_record_after", first, "age", time.Since(first).Round(time.Second),
		"dedup_window", o.Config.DedupWindow)
}
