package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/worker/checkpoint"
	"github.com/edgefence/edgefence/worker/subjects"
	"github.com/edgefence/edgefence/worker/wave"
)

// epoch is the origin of every partition processor's instants: the same
// for every owner, so that a checkpoint's instants mean the same to the
// next one.
var epoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// partition is one owned partition: its engine, fed the partition's
// messages in stream order by one goroutine. Its clock is the stream's:
// a message's JetStream timestamp is its ingest instant (never earlier
// than the one before), and the owner's ticks, stored in the stream like
// pings, advance it while devices are quiet. So the engine's input is a
// function of the stream alone, and any owner, replaying from any
// checkpoint, decides the same transitions.
type partition struct {
	w      *Worker
	n      int
	cancel context.CancelFunc // on lease loss: stop at once, even mid-publish
	stopCh chan struct{}      // closed on release: stop after the message in hand
	done   chan struct{}

	proc    *evaluator.Processor
	sink    wave.Sink
	reader  *ingest.Reader
	js      jetstream.JetStream // the partition's own, for asynchronous publishes
	mq      mqtt.Client         // shared with other partitions (cluster.Conn.MQTT); nil without NATS MQTT listeners
	inWave  map[string]struct{}
	seq     uint64 // last message applied and its outputs published
	applied uint64 // last message applied
	clock   int64  // partition clock, Unix ns
	// The previous owner's last history record, and the pos of its
	// wave: from there on a record may not have been sent (suspect).
	suspectID   string
	suspectFrom *wave.Pos
	sent        string // the last output sent
	// tainted is set when a message was applied but not all its output
	// published: the engine is ahead of seq, and must not be saved.
	tainted bool

	fences   *fence.Set // the engine's, switched by fence messages
	fenceVer string
	savedVer string // the fence version of the last checkpoint saved or loaded

	// What the watchdog reads (stall.go): the last message applied, and
	// whether the loop is waiting for the consumer rather than applying
	// or publishing. replace asks the loop for a new consumer.
	pos     atomic.Uint64
	waiting atomic.Bool
	replace chan struct{}
	// refused: the last try at a new consumer was refused, as opposed to
	// unanswered (the cluster electing its leaders) or made; replacing:
	// the loop is trying.
	refused   atomic.Bool
	replacing atomic.Bool
	watch     watchState // the lease loop's own
	// replacedAt is when the loop last replaced its consumer (consumer.go).
	replacedAt time.Time

	validUntil atomic.Int64 // monotonic ns (since the worker's start) the lease is good until
	devices    atomic.Int64
	lastCkpt   time.Time
	logged     atomic.Int64
}

// check returns errLeaseLost once the lease may have run out, and ctx's
// error once the partition is stopped.
func (pt *partition) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if pt.w.mono() > pt.validUntil.Load() {
		return errLeaseLost
	}
	return nil
}

// logErr logs an error of the per-message path at most once a second.
func (pt *partition) logErr(msg string, err error) {
	now := time.Now().Unix()
	if last := pt.logged.Load(); last != now && pt.logged.CompareAndSwap(last, now) {
		pt.w.log.Warn(msg, "partition", pt.n, "error", err)
	}
}

// run owns the partition until ctx is done or the lease is lost: load
// the checkpoint, replay and follow the stream after it.
func (pt *partition) run(ctx context.Context) error {
	w := pt.w
	fences := func() *fence.Set { return pt.fences }
	ck, err := w.store.Load(ctx, pt.n)
	if err != nil {
		return err
	}
	if pt.fenceVer, pt.fences, err = w.store.StartFences(ctx, ck); err != nil {
		return err
	}
	if ck != nil {
		pt.savedVer = ck.Fences
		pt.proc, err = evaluator.RestoreProcessor(w.cfg.Engine, epoch, fences, &pt.sink, w.em, ck.Snap)
		pt.seq, pt.clock = ck.Seq, ck.Clock
		if err == nil {
			err = pt.reader.RestoreFrames(ck.Frames)
		}
	} else {
		pt.proc, err = evaluator.NewProcessor(w.cfg.Engine, epoch, fences, &pt.sink, w.em)
	}
	if err != nil {
		return fmt.Errorf("partition %d: %w", pt.n, err)
	}
	// Tried while the history stream elects its leader (seconds), but
	// bounded: a stream that never answers stops the partition, logged.
	c, cancel := context.WithTimeout(ctx, 3*w.cfg.Lease)
	last, first, ok, err := w.lastRecord(c, pt.n)
	cancel()
	if err != nil {
		return err
	}
	switch {
	case ck != nil && last == ck.Sent:
		// Handed over cleanly: everything recorded was sent.
	case ok:
		pt.suspectFrom = &first
	default:
		pt.suspectID = last
	}
	pt.applied = pt.seq
	pt.pos.Store(pt.applied)
	pt.inWave = map[string]struct{}{}
	// Its own context: the publish timeout, and nothing left pending
	// or listening once the partition is gone.
	if pt.js, err = jetstream.New(w.conn.NATS, jetstream.WithPublishAsyncTimeout(5*time.Second)); err != nil {
		return fmt.Errorf("partition %d: %w", pt.n, err)
	}
	defer pt.js.CleanupPublisher()
	pt.mq = w.conn.MQTT(pt.n)
	if ck != nil {
		w.checkReplay(ctx, pt.n, ck)
	} else if err := w.saveCheckpoint(ctx, pt); err != nil {
		// It fixes the fence version the partition starts under; without
		// it the next owner takes the current one, the same unless a
		// reload comes first.
		pt.logErr("first checkpoint failed", err)
	}
	pt.devices.Store(int64(pt.proc.Devices()))
	pt.lastCkpt = time.Now()
	w.log.Info("partition owned", "partition", pt.n, "from_seq", pt.seq+1, "devices", pt.proc.Devices(),
		"suspect_from", pt.suspectFrom, "suspect_id", pt.suspectID)

	it, err := pt.firstConsumer(ctx)
	if err != nil {
		return fmt.Errorf("partition %d consumer: %w", pt.n, err)
	}
	defer func() { it.Stop() }()
	// wait ends a wait for a message on lease loss and on release.
	wait, stopWait := context.WithCancel(ctx)
	defer stopWait()
	go func() {
		select {
		case <-wait.Done():
		case <-pt.stopCh:
			stopWait()
		}
	}()
	ticker := pt.startTicks(ctx)
	defer ticker()

	// The outputs of a run of messages are published together (flush):
	// up to the last message the consumer has ready, maxBatch messages
	// or wave.Max outputs, or a message that does not come at once.
	// Every wait is bounded, so that a consumer the watchdog found
	// stalled (stall.go) is replaced within idleWait.
	idleWait := w.cfg.Lease / 4
	var batch int
	for {
		if err := pt.check(ctx); err != nil {
			return pt.stop(ctx, err)
		}
		if pt.stopping() {
			return pt.stop(ctx, pt.flush(ctx))
		}
		if pt.replaceAsked() {
			if it, err = pt.reconsume(wait, it); err != nil {
				continue // stopped: see above
			}
		}
		pt.waiting.Store(true)
		var msg jetstream.Msg
		if batch > 0 {
			msg, err = it.Next(jetstream.NextMaxWait(batchWait))
		} else {
			c, cancel := context.WithTimeout(wait, idleWait)
			msg, err = it.Next(jetstream.NextContext(c))
			cancel()
		}
		if errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) && wait.Err() == nil {
			if batch > 0 {
				pt.waiting.Store(false)
				if err := pt.flush(ctx); err != nil {
					return pt.stop(ctx, err)
				}
				batch = 0
			}
			continue
		}
		if err != nil {
			if ctx.Err() != nil || pt.stopping() {
				if ctx.Err() == nil {
					err = pt.flush(ctx)
				}
				return pt.stop(ctx, cmp.Or(ctx.Err(), err))
			}
			// nats.go gave up re-creating the consumer (one attempt,
			// see consume): a new one, under a new name.
			pt.logErr("partition consumer failed: replacing it", err)
			it, _ = pt.reconsume(wait, it)
			continue
		}
		pt.waiting.Store(false)
		md, err := msg.Metadata()
		if err != nil {
			continue
		}
		if err := pt.apply(ctx, msg.Subject(), msg.Data(), md.Sequence.Stream, md.Timestamp.UnixNano()); err != nil {
			return pt.stop(ctx, err)
		}
		pt.pos.Store(md.Sequence.Stream)
		w.m.lag[pt.n].Store(int64(md.NumPending))
		if batch++; md.NumPending > 0 && batch < maxBatch && len(pt.sink.Buf) < wave.Max {
			continue
		}
		if err := pt.flush(ctx); err != nil {
			return pt.stop(ctx, err)
		}
		batch = 0
		if time.Since(pt.lastCkpt) >= w.cfg.CheckpointEvery {
			if err := w.saveCheckpoint(ctx, pt); err != nil {
				pt.logErr("checkpoint failed", err)
			}
		}
	}
}

// maxBatch bounds the messages a partition applies before it publishes
// their outputs; batchWait is how long it waits for the next one first.
const (
	maxBatch  = 512
	batchWait = 5 * time.Millisecond
)

// stopping reports whether the partition is being handed over.
func (pt *partition) stopping() bool {
	select {
	case <-pt.stopCh:
		return true
	default:
		return false
	}
}

// stop ends the partition after run's loop: with a final checkpoint when
// it is handed over while the lease still holds and everything applied
// is published.
func (pt *partition) stop(ctx context.Context, cause error) error {
	if pt.applied != pt.seq {
		pt.tainted = true
	}
	if pt.stopping() && ctx.Err() == nil && pt.w.mono() <= pt.validUntil.Load() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := pt.w.saveCheckpoint(c, pt); err != nil {
			pt.w.log.Warn("final checkpoint failed: the next owner replays from the one before", "partition", pt.n, "error", err)
		} else {
			pt.w.log.Info("final checkpoint", "partition", pt.n, "seq", pt.seq)
		}
	}
	if errors.Is(cause, context.Canceled) {
		return nil
	}
	return cause
}

// apply feeds one stream message to the engine at its instant; its
// outputs wait in the sink for flush. A fence message switches the
// engine's fences; it fails only when their version cannot be read.
func (pt *partition) apply(ctx context.Context, subject string, data []byte, seq uint64, ts int64) error {
	pt.sink.Apply(seq)
	pt.applied = seq
	pt.clock = max(pt.clock, ts)
	now := time.Unix(0, pt.clock)
	topic, tick := subjects.SplitPing(subject)
	pt.proc.AdvanceThrough(now)
	if subjects.IsFence(subject) {
		if err := pt.switchFences(ctx, string(data), now); err != nil {
			pt.tainted = true
			return err
		}
	} else if tick {
		pt.proc.Sweep(now)
	} else {
		id, pos, _, outcome := pt.reader.ReadAt(topic, data, "nats", now)
		pt.w.m.pings.Inc() // after the read's own counters: a scrape that sees it sees them
		if outcome == ingest.Accepted {
			pg := engine.NewPing(pt.w.clamper, id, &pos, now)
			pt.proc.Ingest(&pg)
			pt.proc.Advance(now)
		}
	}
	pt.devices.Store(int64(pt.proc.Devices()))
	return nil
}

// startTicks publishes the partition's tick every sweep period while it
// holds devices: the stream's own clock for hold deadlines, DWELL timers
// and idle eviction. It returns a function that stops it.
func (pt *partition) startTicks(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(pt.w.cfg.Engine.Sweep)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if pt.devices.Load() > 0 && pt.w.mono() <= pt.validUntil.Load() {
					_ = pt.w.conn.NATS.Publish(subjects.Tick(pt.n), nil) // a lost tick only delays
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// saveCheckpoint stores pt's state after its last applied message.
func (w *Worker) saveCheckpoint(ctx context.Context, pt *partition) error {
	if pt.tainted {
		return errors.New("the engine is ahead of what was published: not saved")
	}
	hs, err := w.historySeq(ctx, pt.n)
	if err != nil {
		return err
	}
	ck := checkpoint.State{Seq: pt.seq, Clock: pt.clock, Sent: pt.sent, HistSeq: hs, Fences: pt.fenceVer, Snap: pt.proc.Snapshot(),
		Frames: pt.reader.Frames()}
	data, err := checkpoint.Encode(&ck)
	if err != nil {
		return err
	}
	if err := pt.check(ctx); err != nil {
		return err
	}
	if err := w.store.Put(ctx, pt.n, &ck, data); err != nil {
		return err
	}
	if ck.Fences != pt.savedVer {
		// The version before may be needed no more.
		pt.savedVer = ck.Fences
		w.kickFenceGC()
	}
	pt.lastCkpt = time.Now()
	w.m.ckptAt[pt.n].Store(pt.lastCkpt.UnixNano())
	w.m.checkpoints.Inc()
	return nil
}
