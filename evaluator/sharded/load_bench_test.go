package sharded

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// atomicSink counts output from any number of shards.
type atomicSink struct{ trans, late atomic.Int64 }

func (s *atomicSink) Transition(*engine.Transition) { s.trans.Add(1) }
func (s *atomicSink) Late(*engine.Late)             { s.late.Add(1) }

// benchFleet is n devices, each wandering among two positions a few
// hundred metres apart in the benchmark area (so some pings cross one of
// the random fences).
type benchFleet struct {
	ids []string
	pos [][2]payload.Position
}

func newBenchFleet(n int, r *rand.Rand) *benchFleet {
	f := &benchFleet{ids: make([]string, n), pos: make([][2]payload.Position, n)}
	for d := range n {
		f.ids[d] = "truck-" + strconv.Itoa(d)
		lat := benchLat0 + r.Float64()*benchDLat
		lon := benchLon0 + r.Float64()*benchDLon
		for k := range 2 {
			f.pos[d][k] = payload.Position{Lat: lat + r.NormFloat64()*0.003, Lon: lon + r.NormFloat64()*0.005, HasTs: true}
		}
	}
	return f
}

// submit builds device d's k-th ping received now and submits it,
// retrying while its shard's queue is full; it returns the retries.
func (f *benchFleet) submit(e *Engine, d, k int, now time.Time) int {
	p := f.pos[d][k%2]
	p.TsNs = now.Add(-40 * time.Millisecond).UnixNano()
	pg := e.Ping(f.ids[d], &p, now)
	retries := 0
	for e.Submit(&pg) == ErrQueueFull {
		retries++
		runtime.Gosched()
	}
	return retries
}

// cpuClasses is the runtime's CPU accounting, which it brings up to date
// at the end of each GC cycle only.
type cpuClasses struct{ gc, idle, total, auto, allocs, goal, live float64 }

func readCPUClasses() cpuClasses {
	s := []metrics.Sample{
		{Name: "/cpu/classes/gc/total:cpu-seconds"},
		{Name: "/cpu/classes/idle:cpu-seconds"},
		{Name: "/cpu/classes/total:cpu-seconds"},
		{Name: "/gc/cycles/automatic:gc-cycles"},
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	metrics.Read(s)
	return cpuClasses{gc: s[0].Value.Float64(), idle: s[1].Value.Float64(), total: s[2].Value.Float64(), auto: float64(s[3].Value.Uint64()),
		allocs: float64(s[4].Value.Uint64()), goal: float64(s[5].Value.Uint64()), live: float64(s[6].Value.Uint64())}
}

func (c cpuClasses) sub(o cpuClasses) cpuClasses {
	return cpuClasses{gc: c.gc - o.gc, idle: c.idle - o.idle, total: c.total - o.total, auto: c.auto - o.auto,
		allocs: c.allocs - o.allocs, goal: c.goal, live: c.live}
}

// gcWindow returns the CPU accounting of a window: the runtime flushes
// it at GC only, so the window is closed with a forced GC whose own cost
// is measured by one more forced GC and taken off.
func gcWindow(c0 cpuClasses) cpuClasses {
	runtime.GC()
	c1 := readCPUClasses()
	runtime.GC()
	c2 := readCPUClasses()
	w, forced := c1.sub(c0), c2.sub(c1)
	w.gc -= forced.gc
	w.idle -= forced.idle
	w.total -= forced.total
	return w
}

// BenchmarkGCShareMillionDevices measures the garbage collector's share
// of the CPU with 1,000,000 active devices in the engine while it
// sustains 200,000 pings/s in real time (each device pings every 5 s;
// 500 ms hold; 1,000 fences): runtime/metrics' GC CPU time ÷ the CPU the
// process used (gc-share), and ÷ all the CPU available to it
// (gc-of-available, the runtime's /cpu/classes/total), and the GC cycles
// that ran. Each iteration fills the engine with the million devices,
// then measures a 3 s window (closed by a forced GC whose own cost,
// measured by a second one, is taken off: the runtime updates its CPU
// accounting at GC only).
// Run it with -benchtime 1x:
//
//	go test -run '^$' -bench GCShareMillionDevices -benchtime 1x ./evaluator/sharded
func BenchmarkGCShareMillionDevices(b *testing.B) {
	const (
		devices = 1_000_000
		rate    = 200_000 // pings/s
		window  = 3 * time.Second
	)
	r := rand.New(rand.NewPCG(11, 11))
	set := randomFences(b, 1000, r)
	fleet := newBenchFleet(devices, r)
	for range b.N {
		b.StopTimer()
		sink := &atomicSink{}
		cfg := engine.DefaultConfig()
		e, err := New(cfg, set, sink, nil)
		if err != nil {
			b.Fatal(err)
		}
		// Every device once: they are all active from here on.
		for d := range devices {
			fleet.submit(e, d, 0, time.Now())
		}
		b.StartTimer()
		runtime.GC()
		c0, start := readCPUClasses(), time.Now()
		sent, retries := 0, 0
		for time.Since(start) < window {
			due := int(time.Since(start).Seconds()*rate) - sent
			if due <= 0 {
				time.Sleep(200 * time.Microsecond)
				continue
			}
			now := time.Now()
			for range due {
				d := sent % devices
				retries += fleet.submit(e, d, 1+sent/devices, now)
				sent++
			}
		}
		elapsed := time.Since(start)
		w := gcWindow(c0)
		b.StopTimer()
		e.Close()
		busy := w.total - w.idle
		allocRate := w.allocs / elapsed.Seconds()
		b.ReportMetric(allocRate/(1<<20), "alloc-MB/s")
		b.ReportMetric(w.live/(1<<20), "live-heap-MB")
		// At this allocation rate the next cycle starts when the heap
		// has grown from live to goal.
		b.ReportMetric((w.goal-w.live)/allocRate, "s-between-GCs")
		b.ReportMetric(100*w.gc/busy, "gc-share-%")
		b.ReportMetric(100*w.gc/w.total, "gc-of-available-%")
		b.ReportMetric(w.auto, "gc-cycles")
		b.ReportMetric(float64(sent)/elapsed.Seconds(), "pings/s")
		b.ReportMetric(busy/elapsed.Seconds(), "cores-busy")
		b.ReportMetric(float64(retries), "queue-full-retries")
		b.StartTimer()
	}
}

// BenchmarkEngineSubmit measures the engine's throughput through Submit
// from two producer goroutines (as two MQTT client goroutines would),
// with one shard and with two: does the engine scale onto both cores?
// 10,000 devices at 1 Hz of event time, 1,000 fences, 500 ms hold. A
// full queue is retried (counted). ns/op is per ping, including the
// final Close that evaluates and flushes everything. Run with -cpu 2:
//
//	go test -run '^$' -bench EngineSubmit -cpu 2 ./evaluator/sharded
func BenchmarkEngineSubmit(b *testing.B) {
	const devices, producers = 10_000, 2
	r := rand.New(rand.NewPCG(7, 7))
	set := randomFences(b, 1000, r)
	fleet := newBenchFleet(devices, r)
	for _, shards := range []int{1, 2} {
		b.Run(fmt.Sprintf("shards=%d", shards), func(b *testing.B) {
			cfg := engine.DefaultConfig()
			cfg.Shards = shards
			sink := &atomicSink{}
			e, err := New(cfg, set, sink, nil)
			if err != nil {
				b.Fatal(err)
			}
			var retries atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for p := range producers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					n := 0
					// Producer p owns the devices ≡ p mod 2, so each
					// device's pings stay in order.
					for g := p; g < b.N; g += producers {
						n += fleet.submit(e, g%devices, g/devices, time.Now())
					}
					retries.Add(int64(n))
				}()
			}
			wg.Wait()
			e.Close()
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pings/s")
			b.ReportMetric(float64(retries.Load())/float64(b.N), "retries/op")
		})
	}
}
