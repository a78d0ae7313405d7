// Package partition is a worker's per-partition processor: it loads a
// partition's checkpoint (or, its lease taken back after a lapse, goes on
// from its state in memory), replays and follows the partition's
// messages in stream order through the engine, publishes their outputs
// (the history stream, the retained bucket, MQTT), takes checkpoints, and
// replaces its consumer when the worker's watchdog asks. Package worker
// owns the partitions: their leases, who runs which, the watchdog.
package partition

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
	"github.com/edgefence/edgefence/worker/subjects"
	"github.com/edgefence/edgefence/worker/wave"
)

// epoch is the origin of every partition processor's instants: the same
// for every owner, so that a checkpoint's instants mean the same to the
// next one.
var epoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// Partition is one owned partition: its engine, fed the partition's
// messages in stream order by one goroutine. Its clock is the stream's:
// a message's JetStream timestamp is its ingest instant (never earlier
// than the one before), and the owner's ticks, stored in the stream like
// pings, advance it while devices are quiet. So the engine's input is a
// function of the stream alone, and any owner, replaying from any
// checkpoint, decides the same transitions.
//
// The worker that owns it starts it (Go), renews its lease (ValidUntil),
// asks it to stop (Stop) or stops it at once (Cancel); its watchdog
// reads Progress and asks for a new consumer (AskReplace). Everything
// else is the partition's goroutine's own.
type Partition struct {
	*state
	o      *Owner
	n      int
	ctx    context.Context    // Go's: cancel ends it
	cancel context.CancelFunc // on lease loss: stop at once, even mid-publish
	stopCh chan struct{}      // closed on release: stop after the message in hand
	done   chan struct{}
	end    error     // run's result, set before done is closed
	endAt  time.Time // when run returned, set before done is closed

	js jetstream.JetStream // the run's own, for asynchronous publishes
	mq mqtt.Client         // shared with other partitions (cluster.Conn.MQTT); nil without NATS MQTT listeners

	// Progress is what the watchdog reads; the partition's goroutine
	// alone writes it.
	Progress Progress
	// replace asks the loop for a new consumer (AskReplace).
	replace chan struct{}
	// replacedAt is when the loop last replaced its consumer (consumer.go).
	replacedAt time.Time

	// ValidUntil is the Owner.Mono instant (ns) the lease is good until:
	// the worker stores it as its lease loop renews the lease (0 when it
	// gives the partition up at once); the partition stops once it has
	// passed.
	ValidUntil atomic.Int64
	devices    atomic.Int64
	logged     atomic.Int64
}

// state is what a partition's engine has made of the stream: loaded from
// the checkpoint when a worker takes the partition, and carried over to
// the next run when the worker takes back a lease that lapsed (Resume).
type state struct {
	loaded  bool // the checkpoint loaded and the history read: run may follow the stream
	proc    *evaluator.Processor
	sink    wave.Sink
	reader  *ingest.Reader
	inWave  map[string]struct{}
	seq     uint64 // last message applied and its outputs published
	applied uint64 // last message applied
	clock   int64  // partition clock, Unix ns
	// The previous owner's last history record, and the pos of its
	// wave: from there on a record may not have been sent (suspect).
	suspectID   string
	suspectFrom *wave.Pos
	sent        string // the last output sent
	// tainted is set when a fence message was applied without its
	// fences: the engine's state is no replay's, and must not be saved
	// or resumed. While applied is ahead of seq the sink holds the
	// outputs of the messages between, not all published: that state
	// is not saved either, but a resumed run publishes them first.
	tainted bool
	// A resumed run reads what another owner may have left while the
	// lease lapsed, as a takeover does at its start, but only when it
	// needs the stream: the last history record before its first
	// publish (unsureHistory), the stored checkpoint before it saves one
	// over it (unsureCheckpoint).
	unsureHistory, unsureCheckpoint bool
	// pendingFrom is the pos of the first output a run that stopped
	// mid-flush left in the sink, maybe recorded and sent already.
	pendingFrom *wave.Pos

	fences   *fence.Set // the engine's, switched by fence messages
	fenceVer string
	savedVer string // the fence version of the last checkpoint saved or loaded
	lastCkpt time.Time
}

// Progress is what a partition's loop tells the worker's watchdog
// (worker's stall.go) of its consumer: written by the loop alone, read
// by the watchdog at any time.
type Progress struct {
	// Pos is the last message applied.
	Pos atomic.Uint64
	// Waiting is set while the loop waits for the consumer rather than
	// applying or publishing.
	Waiting atomic.Bool
	// Refused: the last try at a new consumer was refused, as opposed to
	// unanswered (the cluster electing its leaders) or made.
	Refused atomic.Bool
	// Replacing is set while the loop tries to make a new consumer.
	Replacing atomic.Bool
}

// New returns partition n's processor, not yet running, under a lease
// good until the Owner.Mono instant validUntil.
func New(o *Owner, n int, validUntil int64) *Partition {
	st := &state{}
	cfg := &o.Config
	st.sink = wave.Sink{TransitionPrefix: cfg.TransitionPrefix, LateTopic: cfg.LateTopic, RejectTopic: cfg.RejectTopic}
	st.reader = ingest.NewReader(cfg.Telemetry, nil, &st.sink, o.IngestMetrics, o.Log, cfg.MaxPayload)
	return newRun(o, n, st, validUntil)
}

// newRun returns a run of partition n on st, not yet started.
func newRun(o *Owner, n int, st *state, validUntil int64) *Partition {
	ctx, cancel := context.WithCancel(context.Background())
	pt := &Partition{state: st, o: o, n: n, ctx: ctx, cancel: cancel, stopCh: make(chan struct{}), done: make(chan struct{}),
		replace: make(chan struct{}, 1)}
	pt.ValidUntil.Store(validUntil)
	return pt
}

// Resume returns a new run of pt, which has ended, on its engine's state
// in memory, under a lease good until validUntil; nil when pt must start
// from its checkpoint instead: it ended before it had loaded, on a
// failure of its own, after a fence switch that failed, or longer ago
// than the duplicate window less a lease. Outputs it had not all
// published wait in the sink, and the new run publishes them first.
//
// The engine's state after pt's last message is what any replay reaches
// there, so the new run follows the stream on from it, and reads the
// checkpoint and history streams only when it first needs them (state's
// unsure flags), instead of first thing: after a NATS node's death they
// may still be electing their leaders for seconds. Another owner may have
// held the lease meanwhile: the outputs the new run then makes again, that
// owner recorded, and the history stream drops them as duplicates while
// they are within its window, which the age bound keeps.
func (pt *Partition) Resume(validUntil int64) *Partition {
	<-pt.done
	st, cfg := pt.state, &pt.o.Config
	var why string
	switch {
	case !st.loaded:
		why = "it had not loaded"
	case st.tainted:
		why = "a fence switch failed"
	case pt.end != nil && !errors.Is(pt.end, ErrLeaseLost) && !errors.Is(pt.end, context.Canceled):
		why = "it failed: " + pt.end.Error()
	case time.Since(pt.endAt) >= cfg.DedupWindow-cfg.Lease:
		why = "it stopped too long ago"
	default:
		st.unsureHistory, st.unsureCheckpoint = true, true
		return newRun(pt.o, pt.n, st, validUntil)
	}
	pt.o.Log.Info("partition taken back starts from its checkpoint", "partition", pt.n, "reason", why)
	return nil
}

// Go runs the partition on a goroutine of its own until it is stopped
// (Stop, Cancel) or fails. On a failure of its own, end is called with
// the error (ErrLeaseLost when the lease ran out unrenewed); Done is
// closed after.
func (pt *Partition) Go(end func(error)) {
	go func() {
		defer close(pt.done)
		pt.end = pt.run(pt.ctx)
		pt.endAt = time.Now()
		if pt.end != nil && pt.ctx.Err() == nil {
			end(pt.end)
		}
	}()
}

// Stop asks the partition to stop after the message in hand, with a
// final checkpoint while the lease holds (a release). Call it once.
func (pt *Partition) Stop() { close(pt.stopCh) }

// Cancel stops the partition at once, even mid-publish (a lease lost).
func (pt *Partition) Cancel() { pt.cancel() }

// N returns the partition's number.
func (pt *Partition) N() int { return pt.n }

// Done is closed once the partition's goroutine has ended.
func (pt *Partition) Done() <-chan struct{} { return pt.done }

// Devices returns how many devices the partition's engine holds.
func (pt *Partition) Devices() int64 { return pt.devices.Load() }

// AskReplace asks the partition's loop for a new consumer, unless it was
// asked already: the watchdog's, for a stalled partition.
func (pt *Partition) AskReplace() {
	select {
	case pt.replace <- struct{}{}:
	default:
	}
}

// ReplaceAsked takes the watchdog's request for a new consumer, and
// reports whether there was one: the loop's (a test of the watchdog may
// take it too).
func (pt *Partition) ReplaceAsked() bool {
	select {
	case <-pt.replace:
		return true
	default:
		return false
	}
}

// check returns ErrLeaseLost once the lease may have run out, and ctx's
// error once the partition is stopped.
func (pt *Partition) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if pt.o.Mono() > pt.ValidUntil.Load() {
		return ErrLeaseLost
	}
	return nil
}

// logErr logs an error of the per-message path at most once a second.
func (pt *Partition) logErr(msg string, err error) {
	now := time.Now().Unix()
	if last := pt.logged.Load(); last != now && pt.logged.CompareAndSwap(last, now) {
		pt.o.Log.Warn(msg, "partition", pt.n, "error", err)
	}
}

// run owns the partition until ctx is done or the lease is lost: load
// the checkpoint (unless resumed), replay and follow the stream after it.
func (pt *Partition) run(ctx context.Context) error {
	o, cfg := pt.o, &pt.o.Config
	if pt.loaded {
		o.Log.Info("partition resumed from memory", "partition", pt.n, "from_seq", pt.applied+1, "devices", pt.proc.Devices(),
			"pending_outputs", len(pt.sink.Buf))
		o.Metrics.CheckpointAt[pt.n].Store(pt.lastCkpt.UnixNano())
	} else if err := pt.load(ctx); err != nil {
		return err
	}
	pt.Progress.Pos.Store(pt.applied)
	pt.devices.Store(int64(pt.proc.Devices()))
	// Its own context: the publish timeout, and nothing left pending
	// or listening once the run is over.
	var err error
	if pt.js, err = jetstream.New(o.Conn.NATS, jetstream.WithPublishAsyncTimeout(5*time.Second)); err != nil {
		return fmt.Errorf("partition %d: %w", pt.n, err)
	}
	defer pt.js.CleanupPublisher()
	pt.mq = o.Conn.MQTT(pt.n)

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
	if len(pt.sink.Buf) > 0 { // a resumed run's pending outputs: first
		if err := pt.flush(ctx); err != nil {
			return pt.stop(ctx, err)
		}
	}

	// The outputs of a run of messages are published together (flush):
	// up to the last message the consumer has ready, maxBatch messages
	// or wave.Max outputs, or a message that does not come at once.
	// Every wait is bounded, so that a consumer the watchdog found
	// stalled (package worker, stall.go) is replaced within idleWait.
	idleWait := cfg.Lease / 4
	var batch int
	var delivered uint64 // the consumer's sequence of its last message
	for {
		if err := pt.check(ctx); err != nil {
			return pt.stop(ctx, err)
		}
		if pt.stopping() {
			return pt.stop(ctx, pt.flush(ctx))
		}
		if pt.ReplaceAsked() {
			if it, err = pt.reconsume(wait, it); err != nil {
				continue // stopped: see above
			}
			delivered = 0
		}
		pt.Progress.Waiting.Store(true)
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
				pt.Progress.Waiting.Store(false)
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
			// Lost with its node (missed heartbeats), deleted, or
			// refused: a new one, under a new name.
			pt.logErr("partition consumer failed: replacing it", err)
			it, _ = pt.reconsume(wait, it)
			delivered = 0
			continue
		}
		pt.Progress.Waiting.Store(false)
		md, err := msg.Metadata()
		if err != nil {
			continue
		}
		if md.Sequence.Consumer != delivered+1 {
			// A delivery lost (on a reconnect): the consumer moved past
			// it and never sends it again.
			pt.logErr("partition consumer skipped a message: replacing it", fmt.Errorf("consumer sequence %d after %d", md.Sequence.Consumer, delivered))
			it, _ = pt.reconsume(wait, it)
			delivered = 0
			continue
		}
		delivered = md.Sequence.Consumer
		if err := pt.apply(ctx, msg.Subject(), msg.Data(), md.Sequence.Stream, md.Timestamp.UnixNano()); err != nil {
			return pt.stop(ctx, err)
		}
		pt.Progress.Pos.Store(md.Sequence.Stream)
		o.Metrics.Lag[pt.n].Store(int64(md.NumPending))
		if batch++; md.NumPending > 0 && batch < maxBatch && len(pt.sink.Buf) < wave.Max {
			continue
		}
		if err := pt.flush(ctx); err != nil {
			return pt.stop(ctx, err)
		}
		batch = 0
		if time.Since(pt.lastCkpt) >= cfg.CheckpointEvery {
			if err := pt.saveCheckpoint(ctx); err != nil {
				pt.logErr("checkpoint failed", err)
			}
		}
	}
}

// load restores the partition's engine from its checkpoint (or a new
// one), reads the history stream for what the previous owner may have
// recorded and not sent, and checks that a replay is safe.
func (pt *Partition) load(ctx context.Context) error {
	o, cfg := pt.o, &pt.o.Config
	fences := func() *fence.Set { return pt.fences }
	ck, err := o.Store.Load(ctx, pt.n)
	if err != nil {
		return err
	}
	if pt.fenceVer, pt.fences, err = o.Store.StartFences(ctx, ck); err != nil {
		return err
	}
	if ck != nil {
		pt.savedVer = ck.Fences
		pt.proc, err = evaluator.RestoreProcessor(cfg.Engine, epoch, fences, &pt.sink, o.EngineMetrics, ck.Snap)
		pt.seq, pt.clock = ck.Seq, ck.Clock
		if err == nil {
			err = pt.reader.RestoreFrames(ck.Frames)
		}
	} else {
		pt.proc, err = evaluator.NewProcessor(cfg.Engine, epoch, fences, &pt.sink, o.EngineMetrics)
	}
	if err != nil {
		return fmt.Errorf("partition %d: %w", pt.n, err)
	}
	// Tried while the history stream elects its leader (seconds), but
	// bounded: a stream that never answers stops the partition, logged.
	c, cancel := context.WithTimeout(ctx, 3*cfg.Lease)
	last, first, ok, err := pt.lastRecord(c)
	cancel()
	if err != nil {
		return err
	}
	// Handed over cleanly when the last record is the checkpoint's last
	// sent: everything recorded was sent.
	pt.setSuspects(ck != nil && last == ck.Sent, last, first, ok)
	pt.applied = pt.seq
	pt.inWave = map[string]struct{}{}
	if ck != nil {
		pt.checkReplay(ctx, ck)
	} else if err := pt.saveCheckpoint(ctx); err != nil {
		// It fixes the fence version the partition starts under; without
		// it the next owner takes the current one, the same unless a
		// reload comes first.
		pt.logErr("first checkpoint failed", err)
	}
	pt.lastCkpt = time.Now()
	pt.loaded = true
	o.Log.Info("partition owned", "partition", pt.n, "from_seq", pt.seq+1, "devices", pt.proc.Devices(),
		"suspect_from", pt.suspectFrom, "suspect_id", pt.suspectID)
	return nil
}

// maxBatch bounds the messages a partition applies before it publishes
// their outputs; batchWait is how long it waits for the next one first.
const (
	maxBatch  = 512
	batchWait = 5 * time.Millisecond
)

// stopping reports whether the partition is being handed over.
func (pt *Partition) stopping() bool {
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
func (pt *Partition) stop(ctx context.Context, cause error) error {
	if pt.stopping() && ctx.Err() == nil && pt.o.Mono() <= pt.ValidUntil.Load() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := pt.saveCheckpoint(c); err != nil {
			pt.o.Log.Warn("final checkpoint failed: the next owner replays from the one before", "partition", pt.n, "error", err)
		} else {
			pt.o.Log.Info("final checkpoint", "partition", pt.n, "seq", pt.seq)
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
func (pt *Partition) apply(ctx context.Context, subject string, data []byte, seq uint64, ts int64) error {
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
		pt.o.Metrics.Pings.Inc() // after the read's own counters: a scrape that sees it sees them
		if outcome == ingest.Accepted {
			pg := engine.NewPing(pt.o.Clamper, id, &pos, now)
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
func (pt *Partition) startTicks(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(pt.o.Config.Engine.Sweep)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if pt.devices.Load() > 0 && pt.o.Mono() <= pt.ValidUntil.Load() {
					_ = pt.o.Conn.NATS.Publish(subjects.Tick(pt.n), nil) // a lost tick only delays
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}
