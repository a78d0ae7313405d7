// Package sharded runs the engine concurrently: evaluator.Processors in
// shards, each owned by one goroutine at a time, fed by Submit from the
// client goroutines that bring the pings (docs/performance.md).
package sharded

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/evaluator/stats"
)

// Errors of Submit.
var (
	// ErrQueueFull: the device's shard is behind; the ping was not taken.
	// A broker answers QoS 1 with "quota exceeded" and sheds QoS 0.
	ErrQueueFull = errors.New("engine: shard queue full")
	// ErrClosed: the engine is shutting down.
	ErrClosed = errors.New("engine: closed")
)

// Engine runs Processors in shards. A device is hashed to one shard, and
// one goroutine at a time owns a shard: whoever holds its owner token (a
// mutex only ever tried, never waited for, on the ping path). A client
// goroutine that brings a ping to a free shard evaluates it there and
// then; one that finds the shard owned leaves the ping in the shard's
// bounded queue for the owner, which drains it before letting go. So
// per-device state is only ever touched by one goroutine at a time, in the
// order pings were handed over, and engine work is done by the goroutine
// that brings it: there is no hand-off to a goroutine that the Go
// scheduler may leave waiting behind thousands of runnable connections
// (docs/performance.md). Each shard also has a goroutine of its own for
// what no ping triggers: hold deadlines, sweeps, and shutdown.
type Engine struct {
	cfg    engine.Config
	clamp  clock.Clamper
	m      *stats.Metrics
	fences atomic.Pointer[fence.Set]
	shards []*shard
	closed atomic.Bool
	stop   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

type shard struct {
	mu       sync.Mutex           // the owner token; guards everything below it to closed
	proc     *evaluator.Processor //
	timer    *time.Timer          // fires at the earliest hold deadline
	armed    time.Time            // when timer fires; zero when it is not armed
	closed   bool                 // flushed by Close: takes no more pings
	in       chan engine.Ping     // pings brought while another goroutine owned the shard
	wake     chan struct{}        // asks the shard goroutine to take over a backlog
	devices  atomic.Int64
	buffered atomic.Int64
}

// New starts an engine evaluating against fences. sink receives its
// output from whichever goroutine owns a shard at the time (never from two
// at once for one shard), including Submit's caller; m may be nil.
func New(cfg engine.Config, fences *fence.Set, sink engine.Sink, m *stats.Metrics) (*Engine, error) {
	if m == nil {
		m = stats.NewMetrics(nil)
	}
	e := &Engine{cfg: cfg, clamp: cfg.Clamper(), m: m, stop: make(chan struct{})}
	e.fences.Store(fences)
	base := time.Now()
	for range cfg.Shards {
		proc, err := evaluator.NewProcessor(cfg, base, e.fences.Load, sink, m)
		if err != nil {
			return nil, err
		}
		timer := time.NewTimer(time.Hour)
		timer.Stop()
		e.shards = append(e.shards, &shard{
			proc:  proc,
			timer: timer,
			in:    make(chan engine.Ping, cfg.Queue),
			wake:  make(chan struct{}, 1),
		})
	}
	if len(e.shards) == 0 {
		return nil, cfg.Validate()
	}
	for _, s := range e.shards {
		e.wg.Add(1)
		go e.run(s)
	}
	return e, nil
}

// Config returns the configuration the engine runs with.
func (e *Engine) Config() engine.Config { return e.cfg }

// Metrics returns the engine's metric handles.
func (e *Engine) Metrics() *stats.Metrics { return e.m }

// Fences returns the current fence snapshot.
func (e *Engine) Fences() *fence.Set { return e.fences.Load() }

// SetFences swaps the fence snapshot atomically and reconciles every
// shard with it (see evaluator.Processor.Reconcile): devices inside a removed fence
// get their EXIT before SetFences returns. Device state is keyed by fence
// ID, so unchanged fences keep it.
func (e *Engine) SetFences(s *fence.Set) error {
	e.fences.Store(s)
	return e.Reconcile()
}

// Reconcile runs evaluator.Processor.Reconcile on every shard; a restart calls it
// after restoring state that may name removed fences.
func (e *Engine) Reconcile() error {
	now := time.Now()
	for _, s := range e.shards {
		if err := e.own(s, func(p *evaluator.Processor) { p.Reconcile(now) }); err != nil {
			return err
		}
	}
	return nil
}

// Ping builds the engine's record of a decoded position received now,
// clamping an implausible stamp and counting it per reason.
func (e *Engine) Ping(device string, pos *payload.Position, ingest time.Time) engine.Ping {
	p := engine.NewPing(e.clamp, device, pos, ingest)
	if p.Clamp != clock.ClampNone {
		e.m.Clamped[p.Clamp].Inc()
	}
	return p
}

// Submit hands a ping to its device's shard without waiting for another
// goroutine: if the shard is free, the caller evaluates the ping (and any
// queued before it) itself, and the sink is called from the caller's
// goroutine; if the shard is owned, the ping is queued for the owner, or
// refused with ErrQueueFull when the queue is full.
func (e *Engine) Submit(p *engine.Ping) error {
	if e.closed.Load() {
		return ErrClosed
	}
	s := e.shards[e.shardOf(p.Device)]
	if s.mu.TryLock() {
		if s.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		s.drain()
		s.proc.Ingest(p)
		s.settle(p.Ingest)
		s.unlock()
		return nil
	}
	select {
	case s.in <- *p:
	default:
		e.m.QueueFull.Inc()
		return ErrQueueFull
	}
	// The owner may have let go between the TryLock and the send, and
	// then nobody would look at the queue until the next deadline.
	if s.mu.TryLock() {
		s.drain()
		s.settle(time.Now())
		s.unlock()
	}
	return nil
}

// drain ingests the queued pings, in the order they were queued; the
// caller owns the shard.
func (s *shard) drain() {
	for {
		select {
		case pg := <-s.in:
			s.proc.Ingest(&pg)
		default:
			return
		}
	}
}

// timerGrain is how late the shard's timer may serve a deadline: one
// wake-up releases every ping due within it. Without it the timer fired
// once per ping at a steady load (deadlines 20 µs apart at 50,000 pings/s),
// each firing a goroutine wake-up and a scheduling round.
const timerGrain = time.Millisecond

// settle releases what is due at now, arms the timer for the next hold
// deadline (at least timerGrain ahead) if it is earlier than the armed
// one, and publishes the shard's size; the caller owns the shard.
func (s *shard) settle(now time.Time) {
	p := s.proc
	p.Advance(now)
	if next, ok := p.NextDeadline(); ok {
		if soonest := now.Add(timerGrain); next.Before(soonest) {
			next = soonest
		}
		if s.armed.IsZero() || next.Before(s.armed) {
			s.timer.Reset(next.Sub(now))
			s.armed = next
		}
	}
	s.devices.Store(int64(p.Devices()))
	s.buffered.Store(int64(p.Buffered()))
}

// sweepStep is how many devices the shard goroutine sweeps while it owns
// the shard, about 0.1-0.3 ms of work (cache misses, mostly).
const sweepStep = 1024

// handovers bounds how many times a goroutine takes over the backlog
// others left while it owned the shard, before it leaves the rest to the
// shard goroutine: a client's goroutine must get back to its client.
const handovers = 2

// unlock gives up ownership without stranding pings that were queued
// after the owner's last drain.
func (s *shard) unlock() {
	for range handovers {
		s.mu.Unlock()
		if len(s.in) == 0 || !s.mu.TryLock() {
			return
		}
		s.drain()
		s.settle(time.Now())
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default: // already asked
	}
}

// shardOf hashes a device id with FNV-1a; inline so it does not allocate.
func (e *Engine) shardOf(id string) int {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h ^= uint32(id[i])
		h *= 16777619
	}
	return int(h % uint32(len(e.shards)))
}

// own runs f as the owner of shard s, after the pings queued before it.
func (e *Engine) own(s *shard, f func(*evaluator.Processor)) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.drain()
	f(s.proc)
	s.settle(time.Now())
	s.unlock()
	return nil
}

// do runs f as the owner of device's shard.
func (e *Engine) do(device string, f func(*evaluator.Processor)) error {
	return e.own(e.shards[e.shardOf(device)], f)
}

// Restore sets a device's state in a fence from a committed transition;
// see evaluator.Processor.Restore. Call it before the device's pings arrive.
func (e *Engine) Restore(device, fenceID string, typ engine.Type, event int64) error {
	return e.do(device, func(p *evaluator.Processor) { p.Restore(device, fenceID, typ, event) })
}

// SetHold sets one device's allowed lateness.
func (e *Engine) SetHold(device string, hold time.Duration) error {
	return e.do(device, func(p *evaluator.Processor) { p.SetHold(device, hold) })
}

// Stats is a point-in-time view of the engine's size.
type Stats struct {
	Devices  int64 // devices with state
	Buffered int64 // pings waiting in reorder buffers
	Queued   int64 // pings waiting in shard queues
}

// Stats returns the engine's size as of each shard's last owner.
func (e *Engine) Stats() Stats {
	var st Stats
	for _, s := range e.shards {
		st.Devices += s.devices.Load()
		st.Buffered += s.buffered.Load()
		st.Queued += int64(len(s.in))
	}
	return st
}

// Close stops taking pings, evaluates what is queued, flushes every buffer
// (their transitions reach the sink before Close returns) and stops the
// shard goroutines and timers.
func (e *Engine) Close() {
	e.once.Do(func() {
		e.closed.Store(true)
		close(e.stop)
	})
	e.wg.Wait()
}

// run is the shard's own goroutine: it takes ownership for the work no
// ping brings — hold deadlines of devices that went quiet, sweeps, a
// backlog a client goroutine left — and flushes the shard on Close.
func (e *Engine) run(s *shard) {
	defer e.wg.Done()
	defer s.timer.Stop()
	sweep := time.NewTicker(e.cfg.Sweep)
	defer sweep.Stop()
	for {
		select {
		case <-s.timer.C:
			s.mu.Lock()
			s.armed = time.Time{}
		case <-s.wake:
			s.mu.Lock()
		case now := <-sweep.C:
			s.mu.Lock()
			s.drain()
			for !s.proc.SweepStep(now, sweepStep) {
				// Between steps the client goroutines take the shard,
				// on one core too: they go first.
				s.settle(time.Now())
				s.unlock()
				runtime.Gosched()
				s.mu.Lock()
				s.drain()
			}
		case <-e.stop:
			s.mu.Lock()
			s.drain()
			s.proc.Flush(time.Now())
			s.closed = true
			s.devices.Store(int64(s.proc.Devices()))
			s.buffered.Store(0)
			s.mu.Unlock()
			return
		}
		s.drain()
		s.settle(time.Now())
		s.unlock()
	}
}

// RegisterGauges adds the gauges of e's size to set:
// edgefence_active_devices, _buffered_pings, _queued_pings, _fences.
func (e *Engine) RegisterGauges(set *metrics.Set) {
	set.NewGauge(`edgefence_active_devices`, func() float64 { return float64(e.Stats().Devices) })
	set.NewGauge(`edgefence_buffered_pings`, func() float64 { return float64(e.Stats().Buffered) })
	set.NewGauge(`edgefence_queued_pings`, func() float64 { return float64(e.Stats().Queued) })
	set.NewGauge(`edgefence_fences`, func() float64 { return float64(e.Fences().Len()) })
}
