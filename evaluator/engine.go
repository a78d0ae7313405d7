package evaluator

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// Errors of Submit.
var (
	// ErrQueueFull: the device's shard is behind; the ping was not taken.
	// A broker answers QoS 1 with "quota exceeded" and sheds QoS 0.
	ErrQueueFull = errors.New("engine: shard queue full")
	// ErrClosed: the engine is shutting down.
	ErrClosed = errors.New("engine: closed")
)

// Engine runs Processors on shard goroutines. A device is hashed to one
// shard, whose goroutine alone owns its buffer and state, so the per-device
// path takes no lock. Pings come in from any goroutine through Submit.
type Engine struct {
	cfg    Config
	clamp  Clamper
	m      *Metrics
	fences atomic.Pointer[fence.Set]
	shards []*shard
	closed atomic.Bool
	stop   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

type shard struct {
	in       chan Ping
	ctl      chan func(*Processor)
	proc     *Processor
	devices  atomic.Int64
	buffered atomic.Int64
}

// New starts an engine evaluating against fences. sink receives its
// output from the shard goroutines; m may be nil.
func New(cfg Config, fences *fence.Set, sink Sink, m *Metrics) (*Engine, error) {
	if m == nil {
		m = NewMetrics(nil)
	}
	e := &Engine{cfg: cfg, clamp: cfg.Clamper(), m: m, stop: make(chan struct{})}
	e.fences.Store(fences)
	base := time.Now()
	for range cfg.Shards {
		proc, err := NewProcessor(cfg, base, e.fences.Load, sink, m)
		if err != nil {
			return nil, err
		}
		e.shards = append(e.shards, &shard{
			in:   make(chan Ping, cfg.Queue),
			ctl:  make(chan func(*Processor)),
			proc: proc,
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
func (e *Engine) Config() Config { return e.cfg }

// Metrics returns the engine's metric handles.
func (e *Engine) Metrics() *Metrics { return e.m }

// Fences returns the current fence snapshot.
func (e *Engine) Fences() *fence.Set { return e.fences.Load() }

// SetFences swaps the fence snapshot atomically and reconciles every
// shard with it (see Processor.Reconcile): devices inside a removed fence
// get their EXIT before SetFences returns. Device state is keyed by fence
// ID, so unchanged fences keep it.
func (e *Engine) SetFences(s *fence.Set) error {
	e.fences.Store(s)
	return e.Reconcile()
}

// Reconcile runs Processor.Reconcile on every shard and waits for it; a
// restart calls it after restoring state that may name removed fences.
func (e *Engine) Reconcile() error {
	now := time.Now()
	for _, sh := range e.shards {
		done := make(chan struct{})
		select {
		case sh.ctl <- func(p *Processor) { p.Reconcile(now); close(done) }:
			<-done
		case <-e.stop:
			return ErrClosed
		}
	}
	return nil
}

// Ping builds the engine's record of a decoded position received now,
// clamping an implausible stamp and counting it per reason.
func (e *Engine) Ping(device string, pos *payload.Position, ingest time.Time) Ping {
	p := e.clamp.NewPing(device, pos, ingest)
	if p.Clamp != ClampNone {
		e.m.Clamped[p.Clamp].Inc()
	}
	return p
}

// Submit hands a ping to its device's shard without blocking.
func (e *Engine) Submit(p *Ping) error {
	if e.closed.Load() {
		return ErrClosed
	}
	select {
	case e.shards[e.shardOf(p.Device)].in <- *p:
		return nil
	default:
		e.m.QueueFull.Inc()
		return ErrQueueFull
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

// do runs f on the shard that owns device and waits for it.
func (e *Engine) do(device string, f func(*Processor)) error {
	done := make(chan struct{})
	select {
	case e.shards[e.shardOf(device)].ctl <- func(p *Processor) { f(p); close(done) }:
		<-done
		return nil
	case <-e.stop:
		return ErrClosed
	}
}

// Restore sets a device's state in a fence from a committed transition;
// see Processor.Restore. Call it before the device's pings arrive.
func (e *Engine) Restore(device, fenceID string, typ Type, event int64) error {
	return e.do(device, func(p *Processor) { p.Restore(device, fenceID, typ, event) })
}

// SetHold sets one device's allowed lateness.
func (e *Engine) SetHold(device string, hold time.Duration) error {
	return e.do(device, func(p *Processor) { p.SetHold(device, hold) })
}

// Stats is a point-in-time view of the engine's size.
type Stats struct {
	Devices  int64 // devices with state
	Buffered int64 // pings waiting in reorder buffers
	Queued   int64 // pings waiting in shard queues
}

// Stats returns the engine's size as of each shard's last loop.
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

// batch bounds how many queued pings a shard takes before it looks at its
// timers again, so a flood cannot delay hold deadlines indefinitely.
const batch = 256

func (e *Engine) run(s *shard) {
	defer e.wg.Done()
	p := s.proc
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	sweep := time.NewTicker(e.cfg.Sweep)
	defer sweep.Stop()
	var armed time.Time // when the timer fires; zero when it is not armed
	for {
		select {
		case pg := <-s.in:
			p.Ingest(&pg)
		drain:
			for range batch - 1 {
				select {
				case pg = <-s.in:
					p.Ingest(&pg)
				default:
					break drain
				}
			}
		case <-timer.C:
			armed = time.Time{}
		case now := <-sweep.C:
			p.Sweep(now)
		case f := <-s.ctl:
			f(p)
		case <-e.stop:
			for {
				select {
				case pg := <-s.in:
					p.Ingest(&pg)
					continue
				default:
				}
				break
			}
			p.Flush(time.Now())
			s.devices.Store(int64(p.Devices()))
			s.buffered.Store(0)
			return
		}
		now := time.Now()
		p.Advance(now)
		if next, ok := p.NextDeadline(); ok && (armed.IsZero() || next.Before(armed)) {
			timer.Reset(next.Sub(now))
			armed = next
		}
		s.devices.Store(int64(p.Devices()))
		s.buffered.Store(int64(p.Buffered()))
	}
}
