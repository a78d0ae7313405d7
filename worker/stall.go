package worker

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/partition"
	"github.com/edgefence/edgefence/worker/subjects"
)

// watchState is the watchdog's view of one owned partition, kept by the
// watch loop alone (watchLoop's map, one per partition it runs).
type watchState struct {
	pos     uint64 // the last message applied, as last seen
	behind  int64  // mono ns since the stream has held messages beyond pos while the partition waited; 0 if not
	stalled int64  // mono ns the stall was found; 0 if not stalled
	asked   int64  // mono ns a new consumer was last asked for
}

// stallAfter is how long a partition waiting for its consumer may apply
// nothing while the stream holds messages for it before it is stalled and
// gets a new consumer. A healthy consumer delivers within milliseconds and
// a new one costs about a second, so a false alarm is cheap, and a consumer
// lost with its stream leader is replaced soon after the election.
const stallAfter = time.Second

// watchEvery is the watchdog's period.
const watchEvery = 250 * time.Millisecond

// retryAfter is how long a stalled partition waits on a new consumer
// before it asks for another, or is given up when its tries are refused:
// half the lease, so that a partition given up moves to another owner
// well before the lease plus half of it, the failover time of a dead
// worker.
func (w *Worker) retryAfter() int64 { return int64(w.cfg.Lease / 2) }

// watchLoop runs the watchdog on its own, so that a lease loop waiting on
// an unreachable lease bucket (a NATS node's death) does not delay it.
func (w *Worker) watchLoop(ctx context.Context) {
	defer close(w.watchDone)
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	states := map[*partition.Partition]*watchState{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		w.watch(ctx, states)
	}
}

// watch is one round of the watchdog: it reads how many messages of each owned partition's subjects
// the stream holds beyond what the partition applied (partition_lag),
// asks a partition stalled for stallAfter for a new consumer, and gives up
// one whose new consumer is refused. states is each running partition's
// watch state: a partition taken again starts afresh.
func (w *Worker) watch(ctx context.Context, states map[*partition.Partition]*watchState) {
	w.mu.Lock()
	parts := make(map[int]*partition.Partition, len(w.parts))
	for n, pt := range w.parts {
		parts[n] = pt
	}
	w.mu.Unlock()
	for pt := range states {
		if parts[pt.N()] != pt {
			delete(states, pt)
		}
	}
	if len(parts) == 0 {
		return
	}
	// The reads run together and briefly: a round that cannot read the
	// stream decides nothing, and the next one comes soon.
	ctx, cancel := context.WithTimeout(ctx, max(w.cfg.Lease/8, watchEvery))
	defer cancel()
	type reading struct {
		pos, lag, next uint64
		err            error
	}
	reads := make(map[int]*reading, len(parts))
	var wg sync.WaitGroup
	for n, pt := range parts {
		r := &reading{pos: pt.Progress.Pos.Load()}
		reads[n] = r
		wg.Go(func() { r.lag, r.next, r.err = w.pending(ctx, n, r.pos) })
	}
	wg.Wait()
	for n, pt := range parts {
		r := reads[n]
		if r.err != nil {
			continue // unknown this round: nothing decided
		}
		w.m.Lag[n].Store(int64(r.lag))
		st := states[pt]
		if st == nil {
			st = &watchState{}
			states[pt] = st
		}
		if w.stalled(ctx, n, pt, st, r.pos, r.lag, r.next) {
			w.releaseStalled(n, pt)
		}
	}
}

// stalled updates pt's watch state st with a reading: its position pos, and
// lag messages of its subjects beyond it in the stream, the first at
// next. A partition that has applied nothing for stallAfter while
// waiting for its consumer with messages beyond its position is stalled:
// logged, counted, and asked for a new consumer, and for another every
// retryAfter while it stays so. stalled reports whether its last try at
// a new consumer was refused retryAfter after it asked: it is to be given
// up.
func (w *Worker) stalled(ctx context.Context, n int, pt *partition.Partition, st *watchState, pos, lag, next uint64) bool {
	now := w.mono()
	moved := pos != st.pos
	st.pos = pos
	if st.stalled != 0 && (moved || lag == 0) {
		w.log.Info("partition moving again", "partition", n, "position", pos, "lag", lag)
		st.stalled = 0
	}
	waiting := pt.Progress.Waiting.Load()
	if lag == 0 || !waiting || moved {
		st.behind = 0
		if lag > 0 && waiting {
			st.behind = now
		}
		return false
	}
	if st.behind == 0 {
		st.behind = now
		return false
	}
	if now-st.behind < int64(stallAfter) {
		return false
	}
	if st.stalled == 0 {
		st.stalled, st.asked = now, now
		last, err := w.lastSeq(ctx, n)
		w.log.Warn("partition stalled: its consumer delivers nothing while the stream holds messages for it; replacing the consumer",
			"partition", n, "position", pos, "next_seq", next, "lag", lag, "stream_last_seq", last, "last_seq_error", err,
			"for", time.Duration(now-st.behind).Round(time.Millisecond))
		w.m.stalls.Inc()
		pt.AskReplace()
		return false
	}
	switch {
	case now-st.asked < w.retryAfter():
		return false
	case pt.Progress.Refused.Load():
		return true
	case pt.Progress.Replacing.Load():
		// Its tries go unanswered: the cluster is electing its leaders,
		// and another owner could do no better (the lease bounds it).
		return false
	}
	// Made and still silent, as one made while the stream's leader
	// changed can be: another owner would only make another, so this
	// one does.
	st.asked = now
	pt.AskReplace()
	return false
}

// releaseStalled gives partition n up: stalled, and refused a new
// consumer. It stops at once, its lease is not renewed but deleted,
// so that another worker takes it from its checkpoint, or this one after
// a lease, or at once when it is the only one (rebalance).
func (w *Worker) releaseStalled(n int, pt *partition.Partition) {
	w.log.Error("stalled partition given up: a new consumer is refused; it is taken again from its checkpoint",
		"partition", n, "position", pt.Progress.Pos.Load())
	pt.ValidUntil.Store(0)
	pt.Cancel()
	w.dropPartition(n, pt)
	w.m.stalledOut.Inc()
	w.mu.Lock()
	w.holdUntil[n] = w.mono() + int64(w.cfg.Lease)
	w.mu.Unlock()
}

// numPendingHeader counts, on a batched direct get's message, the
// messages matching its filter after it (nats-server's JSNumPending).
const numPendingHeader = "Nats-Num-Pending"

// pending returns how many messages of partition n's subjects the ping
// stream holds after sequence pos, and the first one's sequence. It asks
// the stream itself, not the partition's consumer, so that it holds when
// the consumer is gone or unreachable: a batched direct get of the first
// such message, whose Nats-Num-Pending counts those after it. Any replica
// answers it (AllowDirect), the stream's leader or not.
func (w *Worker) pending(ctx context.Context, n int, pos uint64) (lag, next uint64, err error) {
	m, err := w.directGet(ctx, fmt.Sprintf(`{"seq":%d,"next_by_subj":%q,"batch":1}`, pos+1, subjects.PingFilter(n)))
	if err != nil || m == nil {
		return 0, 0, err
	}
	left, err := strconv.ParseUint(m.Header.Get(numPendingHeader), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("direct get: %s: %w", numPendingHeader, err)
	}
	next, err = strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("direct get: %s: %w", jetstream.SequenceHeader, err)
	}
	return left + 1, next, nil
}

// lastSeq returns the sequence of the last message of partition n's
// subjects in the ping stream (0 when there is none).
func (w *Worker) lastSeq(ctx context.Context, n int) (uint64, error) {
	m, err := w.directGet(ctx, fmt.Sprintf(`{"last_by_subj":%q}`, subjects.PingFilter(n)))
	if err != nil || m == nil {
		return 0, err
	}
	return strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
}

// directGet sends a direct get request to the ping stream and returns
// the message it answers with, or nil when no message matches.
func (w *Worker) directGet(ctx context.Context, req string) (*nats.Msg, error) {
	m, err := w.conn.NATS.RequestWithContext(ctx, "$JS.API.DIRECT.GET."+subjects.PingStream, []byte(req))
	if err != nil {
		return nil, fmt.Errorf("direct get: %w", err)
	}
	switch status := m.Header.Get("Status"); status {
	case "":
		return m, nil
	case "404":
		return nil, nil
	default:
		return nil, fmt.Errorf("direct get: status %s %s", status, m.Header.Get("Description"))
	}
}
