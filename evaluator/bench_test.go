package evaluator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/evaluator/reorder"
)

// Benchmarks area: 50 km × 50 km around Berlin.
const (
	benchLat0, benchLon0 = 52.30, 13.05
	benchDLat, benchDLon = 0.45, 0.74
)

// randomFences builds n convex polygons of 8–16 vertices, 200–2000 m
// across, scattered over the benchmark area.
func randomFences(tb testing.TB, n int, r *rand.Rand) *fence.Set {
	var b strings.Builder
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		lat := benchLat0 + r.Float64()*benchDLat
		lon := benchLon0 + r.Float64()*benchDLon
		radius := (100 + r.Float64()*900) / 111320 // degrees of latitude
		k := 8 + r.IntN(9)
		fmt.Fprintf(&b, `{"type":"Feature","id":"f%d","geometry":{"type":"Polygon","coordinates":[[`, i)
		for j := 0; j <= k; j++ {
			a := 2 * math.Pi * float64(j%k) / float64(k)
			fmt.Fprintf(&b, "[%.6f,%.6f],", lon+radius*math.Cos(a)/math.Cos(lat*math.Pi/180), lat+radius*math.Sin(a))
		}
		s := b.String()
		b.Reset()
		b.WriteString(s[:len(s)-1])
		b.WriteString(`]]}}`)
	}
	b.WriteString(`]}`)
	set, err := fence.Parse([]byte(b.String()))
	if err != nil {
		tb.Fatal(err)
	}
	return set
}

type countSink struct{ trans, late int }

func (s *countSink) Transition(*engine.Transition) { s.trans++ }
func (s *countSink) Late(*engine.Late)             { s.late++ }

// BenchmarkPipeline measures one ping through decode → clamp → reorder
// buffer → state machine with 1,000 fences, on one goroutine, in virtual
// time: 10,000 devices reporting at 1 Hz, each wandering among four
// positions a few hundred metres apart so that some pings cross fences.
func BenchmarkPipeline(b *testing.B) { pipeline(b, engine.DefaultConfig()) }

// BenchmarkAdaptivePipeline is BenchmarkPipeline with the adaptive hold.
func BenchmarkAdaptivePipeline(b *testing.B) {
	cfg := engine.DefaultConfig()
	cfg.Hold = engine.AdaptiveHold
	pipeline(b, cfg)
}

func pipeline(b *testing.B, cfg engine.Config) {
	const devices, positions = 10000, 4
	// The gate judges every ping; its devices wander hundreds of metres a
	// second, which it would set aside before the state machine.
	cfg.MaxSpeed = 2000
	r := rand.New(rand.NewPCG(7, 7))
	set := randomFences(b, 1000, r)
	sink := &countSink{}
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	proc, err := NewProcessor(cfg, base, func() *fence.Set { return set }, sink, nil)
	if err != nil {
		b.Fatal(err)
	}
	clamp := cfg.Clamper()
	ids := make([]string, devices)
	payloads := make([][]byte, devices*positions)
	tsAt := make([]int, devices*positions) // offset of the 13 ts digits
	for d := range devices {
		ids[d] = "truck-" + strconv.Itoa(d)
		lat := benchLat0 + r.Float64()*benchDLat
		lon := benchLon0 + r.Float64()*benchDLon
		for k := range positions {
			p := fmt.Sprintf(`{"lat":%.6f,"lon":%.6f,"ts":1764583200000,"acc":8.5}`,
				lat+r.NormFloat64()*0.003, lon+r.NormFloat64()*0.005)
			payloads[d*positions+k] = []byte(p)
			tsAt[d*positions+k] = strings.Index(p, `"ts":`) + 5
		}
	}
	var dec payload.Decoder
	const step = 100 * time.Microsecond // 10,000 pings/s of virtual time: 1 Hz each
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		d := i % devices
		k := d*positions + (i/devices)%positions
		ingest := base.Add(time.Duration(i) * step)
		buf := payloads[k]
		// The device stamps 40 ms before ingest.
		strconv.AppendInt(buf[:tsAt[k]], ingest.Add(-40*time.Millisecond).UnixMilli(), 10)
		pos, err := dec.Decode(buf, payload.Canonical)
		if err != nil {
			b.Fatal(err)
		}
		pg := engine.NewPing(clamp, ids[d], &pos, ingest)
		proc.Ingest(&pg)
		if i%64 == 0 {
			proc.Advance(ingest)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pings/s")
	if sink.late > 0 {
		b.Fatalf("%d late pings in an in-order stream", sink.late)
	}
}

// BenchmarkMemoryPerDevice measures the heap held per active device at
// 1,000,000 devices, each with one fence state, one committed ping in its
// history and two buffered pings, beyond the pings themselves (a buffered
// ping costs its Ping in the device's heap and its hold deadline in the
// shard's queue). Run it with -benchtime=1x.
func BenchmarkMemoryPerDevice(b *testing.B) { memoryPerDevice(b, 1_000_000, 1) }

// BenchmarkMemoryPerDeviceFullHistory is BenchmarkMemoryPerDevice with a
// full history (DefaultHistoryPoints committed pings) at 100,000 devices.
func BenchmarkMemoryPerDeviceFullHistory(b *testing.B) {
	memoryPerDevice(b, 100_000, engine.DefaultHistoryPoints)
}

func memoryPerDevice(b *testing.B, devices, points int) {
	set := mustFences(b, testFences)
	for range b.N {
		b.StopTimer()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
		cfg := engine.DefaultConfig()
		cfg.Hold = engine.MaxHold // keep pings buffered
		proc, err := NewProcessor(cfg, base, func() *fence.Set { return set }, &countSink{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		ping := func(d int, off time.Duration) {
			id := "truck-" + strconv.Itoa(d)
			pos := payload.Position{Lat: inDepot.lat, Lon: inDepot.lon, TsNs: base.Add(off).UnixNano(), HasTs: true}
			pg := engine.NewPing(cfg.Clamper(), id, &pos, base.Add(off))
			proc.Ingest(&pg)
		}
		for k := range points {
			for d := range devices {
				ping(d, time.Duration(k)*time.Second)
			}
			proc.Flush(base) // committed; the first gives one ENTER each: one fence state
		}
		for d := range devices {
			ping(d, time.Duration(points)*time.Second)
			ping(d, time.Duration(points+1)*time.Second)
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		pings, kept := 0, 0
		for _, d := range proc.devices {
			pings += len(d.buf)
			kept += len(d.Points)
		}
		if kept != devices*points {
			b.Fatalf("%d committed pings kept, want %d", kept, devices*points)
		}
		used := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		used -= int64(pings) * int64(unsafe.Sizeof(reorder.Held{})+unsafe.Sizeof(reorder.Deadline[*device]{}))
		b.ReportMetric(float64(used)/float64(devices), "B/device")
		b.ReportMetric(float64(pings)/float64(devices), "pings/device")
		runtime.KeepAlive(proc)
		b.StartTimer()
	}
}

// BenchmarkSweepMillionDevices measures the housekeeping sweep over
// 1,000,000 devices parked in fences (empty buffers: each is looked at
// for DWELL and idleness): a whole round, which the shard goroutine used
// to do while owning the shard, and the longest of the 1,024-device steps
// it owns the shard for now. Run it with -benchtime=3x.
func BenchmarkSweepMillionDevices(b *testing.B) {
	const devices = 1_000_000
	set := mustFences(b, testFences)
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	cfg := engine.DefaultConfig()
	cfg.Hold = 0
	proc, err := NewProcessor(cfg, base, func() *fence.Set { return set }, &countSink{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for d := range devices {
		pos := payload.Position{Lat: inDepot.lat, Lon: inDepot.lon, TsNs: base.UnixNano(), HasTs: true}
		pg := engine.NewPing(cfg.Clamper(), "truck-"+strconv.Itoa(d), &pos, base)
		proc.Ingest(&pg)
	}
	now := base.Add(time.Second)
	var step time.Duration
	b.ResetTimer()
	for range b.N {
		proc.Sweep(now)
		for done := false; !done; {
			t := time.Now()
			done = proc.SweepStep(now, 1024)
			step = max(step, time.Since(t))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(2*b.N), "ms/round")
	b.ReportMetric(float64(step.Microseconds()), "µs-longest-step")
}
