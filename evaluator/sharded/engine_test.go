package sharded

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/payload"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// chanSink forwards transitions to a channel, as a broker would publish them.
type chanSink struct {
	trans chan engine.Transition
	late  chan engine.Late
}

func newChanSink() *chanSink {
	return &chanSink{trans: make(chan engine.Transition, 1024), late: make(chan engine.Late, 1024)}
}
func (s *chanSink) Transition(t *engine.Transition) { s.trans <- *t }
func (s *chanSink) Late(l *engine.Late)             { s.late <- *l }

func (s *chanSink) next(t *testing.T) engine.Transition {
	t.Helper()
	select {
	case tr := <-s.trans:
		return tr
	case <-time.After(5 * time.Second):
		t.Fatal("no transition within 5 s")
		return engine.Transition{}
	}
}

func newEngine(t *testing.T, sink engine.Sink, mod func(*engine.Config)) *Engine {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Shards = 2
	// The fixtures jump kilometres in a second, which the speed gate (on by
	// default) sets aside; the gate has tests of its own.
	cfg.MaxSpeed = 0
	if mod != nil {
		mod(&cfg)
	}
	e, err := New(cfg, mustFences(t, testFences), sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func submit(t *testing.T, e *Engine, dev string, p pos, stamp time.Time) {
	t.Helper()
	pos := payload.Position{Lat: p.lat, Lon: p.lon, TsNs: stamp.UnixNano(), HasTs: true}
	pg := e.Ping(dev, &pos, time.Now())
	if err := e.Submit(&pg); err != nil {
		t.Fatal(err)
	}
}

func TestEngineParkedDeviceEntersAfterTheHold(t *testing.T) {
	sink := newChanSink()
	e := newEngine(t, sink, func(c *engine.Config) { c.Hold = 50 * time.Millisecond })
	now := time.Now()
	submit(t, e, "parked", inDepot, now)
	tr := sink.next(t)
	if tr.Device != "parked" || tr.Fence != "depot" || tr.Type != engine.Enter || tr.Event != now.UnixNano() {
		t.Fatalf("got %+v, want parked depot ENTER at its stamp", tr)
	}
	if waited := time.Since(tr.Ingest); waited < 50*time.Millisecond {
		t.Fatalf("released %v after ingest, before the 50ms hold", waited)
	}
}

func TestEngineCloseFlushesBuffers(t *testing.T) {
	sink := newChanSink()
	e := newEngine(t, sink, func(c *engine.Config) { c.Hold = engine.MaxHold })
	now := time.Now()
	for i := range 10 {
		submit(t, e, fmt.Sprintf("dev-%d", i), inYard, now)
	}
	e.Close()
	if n := len(sink.trans); n != 10 {
		t.Fatalf("%d transitions after Close, want all 10 buffered ENTERs", n)
	}
	pg := e.Ping("late-comer", &payload.Position{Lat: 1, Lon: 1}, time.Now())
	if err := e.Submit(&pg); !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after Close = %v, want ErrClosed", err)
	}
}

// blockingSink holds the shard goroutine inside the sink until released.
type blockingSink struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *blockingSink) Transition(*engine.Transition) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
}
func (s *blockingSink) Late(*engine.Late) {}

func TestEngineFullQueueRefusesAtOnceAndOthersContinue(t *testing.T) {
	sink := &blockingSink{entered: make(chan struct{}), release: make(chan struct{})}
	e := newEngine(t, sink, func(c *engine.Config) { c.Shards = 1; c.Queue = 4; c.Hold = time.Millisecond })
	submit(t, e, "stuck", inDepot, time.Now())
	select { // the shard is now busy publishing
	case <-sink.entered:
	case <-time.After(5 * time.Second):
		close(sink.release)
		t.Fatal("the ping was not evaluated within 5 s")
	}
	var full int
	for i := range 10 {
		pos := payload.Position{Lat: inDepot.lat, Lon: inDepot.lon, TsNs: time.Now().UnixNano(), HasTs: true}
		pg := e.Ping(fmt.Sprintf("dev-%d", i), &pos, time.Now())
		if err := e.Submit(&pg); errors.Is(err, ErrQueueFull) {
			full++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if full != 6 {
		t.Fatalf("%d of 10 refused with ErrQueueFull, want 6 beyond the queue of 4", full)
	}
	if got := e.Metrics().QueueFull.Get(); got != 6 {
		t.Fatalf("queue full = %d, want 6", got)
	}
	close(sink.release)
}

func TestEngineFenceSwapUnderLoadIsRaceFree(t *testing.T) {
	sink := newChanSink()
	go func() { // drain
		for range sink.trans {
		}
	}()
	e := newEngine(t, sink, func(c *engine.Config) { c.Hold = time.Millisecond })
	a := e.Fences()
	b := mustFences(t, `{"type":"FeatureCollection","features":[]}`)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				p := points[i%len(points)]
				pos := payload.Position{Lat: p.lat, Lon: p.lon, TsNs: time.Now().UnixNano(), HasTs: true}
				pg := e.Ping(fmt.Sprintf("dev-%d-%d", g, i%50), &pos, time.Now())
				_ = e.Submit(&pg) // a full queue is fine here
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 500 {
			if i%2 == 0 {
				e.SetFences(b)
			} else {
				e.SetFences(a)
			}
			if f := e.Fences(); f != a && f != b {
				panic("torn snapshot")
			}
		}
	}()
	wg.Wait()
	e.Close()
	close(sink.trans)
	if st := e.Stats(); st.Devices == 0 || st.Buffered != 0 {
		t.Fatalf("stats after close = %+v, want devices and nothing buffered", st)
	}
}

func TestEngineRestoreBeforeTelemetry(t *testing.T) {
	sink := newChanSink()
	e := newEngine(t, sink, func(c *engine.Config) { c.Hold = 10 * time.Millisecond })
	now := time.Now()
	if err := e.Restore("truck-1", "depot", engine.Enter, now.Add(-time.Minute).UnixNano()); err != nil {
		t.Fatal(err)
	}
	submit(t, e, "truck-1", inDepot, now)
	submit(t, e, "truck-1", outside, now.Add(time.Millisecond))
	if tr := sink.next(t); tr.Type != engine.Exit || tr.Fence != "depot" {
		t.Fatalf("first transition after restore = %+v, want EXIT depot (no duplicate ENTER)", tr)
	}
}

func TestEngineRejectsBadConfig(t *testing.T) {
	cfg := engine.DefaultConfig()
	cfg.BufferCap = 0
	if _, err := New(cfg, &fence.Set{}, newChanSink(), nil); !errors.Is(err, engine.ErrConfig) {
		t.Fatalf("New with buffer cap 0 = %v, want engine.ErrConfig", err)
	}
}

// A ping brought to a free shard is evaluated by the goroutine that brings
// it: with no hold, its transition is out before Submit returns, with no
// other goroutine to wait for.
func TestEngineFreeShardEvaluatesInTheCaller(t *testing.T) {
	sink := newChanSink()
	e := newEngine(t, sink, func(c *engine.Config) { c.Hold = 0; c.Sweep = time.Hour })
	submit(t, e, "walker", inDepot, time.Now())
	select {
	case tr := <-sink.trans:
		if tr.Type != engine.Enter || tr.Device != "walker" {
			t.Fatalf("got %v %s, want ENTER of walker", tr.Type, tr.Device)
		}
	default:
		t.Fatal("Submit returned before the ping to a free shard was evaluated")
	}
}

// Many goroutines (connections) bring pings to one shard with a small
// queue, retrying refusals as trackers do. Every accepted ping is
// evaluated — none is stranded in the queue when its owner lets go, even
// with the sweep (which would drain a stranded queue) an hour away — and
// each device's transitions come in its own order.
func TestEngineConcurrentSubmittersStrandNothing(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]engine.Type{}
	sink := sinkFunc(func(tr *engine.Transition) {
		mu.Lock()
		got[tr.Device] = append(got[tr.Device], tr.Type)
		mu.Unlock()
	})
	e := newEngine(t, sink, func(c *engine.Config) { c.Hold = 0; c.Shards = 1; c.Queue = 2; c.Sweep = time.Hour })
	const workers, devices, crossings = 8, 4, 50
	var wg sync.WaitGroup
	var refused atomic.Int64
	for w := range workers {
		wg.Go(func() {
			for i := range crossings * 2 {
				for d := range devices {
					p := inDepot
					if i%2 == 1 {
						p = outside
					}
					pos := payload.Position{Lat: p.lat, Lon: p.lon, TsNs: time.Now().UnixNano(), HasTs: true}
					pg := e.Ping(fmt.Sprintf("w%d-d%d", w, d), &pos, time.Now())
					for e.Submit(&pg) != nil {
						refused.Add(1)
						runtime.Gosched()
					}
				}
			}
		})
	}
	wg.Wait()
	want := crossings * 2
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := 0
		for _, ts := range got {
			n += len(ts)
		}
		mu.Unlock()
		if n == workers*devices*want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d transitions after 10 s (queued %d): accepted pings were stranded", n, workers*devices*want, e.Stats().Queued)
		}
		time.Sleep(10 * time.Millisecond)
	}
	for dev, ts := range got {
		for i, typ := range ts {
			if wantT := []engine.Type{engine.Enter, engine.Exit}[i%2]; typ != wantT {
				t.Fatalf("%s: transition %d is %v, want %v (order lost)", dev, i, typ, wantT)
			}
		}
	}
	t.Logf("%d refusals retried", refused.Load())
}

type sinkFunc func(*engine.Transition)

func (f sinkFunc) Transition(t *engine.Transition) { f(t) }
func (f sinkFunc) Late(*engine.Late)               {}

// A ping brought while another goroutine owns the shard waits in the
// queue, and the owner evaluates it before it lets go.
func TestEngineOwnerTakesPingsQueuedWhileItOwned(t *testing.T) {
	sink := newChanSink()
	e := newEngine(t, sink, func(c *engine.Config) { c.Hold = 0; c.Shards = 1; c.Sweep = time.Hour })
	s := e.shards[0]
	s.mu.Lock() // the test owns the shard, as a client's goroutine would
	submit(t, e, "walker", inDepot, time.Now())
	if len(sink.trans) != 0 || e.Stats().Queued != 1 {
		t.Fatalf("the ping was not queued for the owner (%d transitions, %d queued)", len(sink.trans), e.Stats().Queued)
	}
	s.unlock()
	select {
	case tr := <-sink.trans:
		if tr.Type != engine.Enter {
			t.Fatalf("got %v, want ENTER", tr.Type)
		}
	default:
		t.Fatal("the owner let go of the shard without evaluating the queued ping")
	}
}
