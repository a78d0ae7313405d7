package evaluator

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/payload"
)

// BenchmarkHeapAtDevices reports the Go heap in use (runtime.MemStats
// HeapInuse after a GC) with 1,000, 10,000 and 100,000 active devices in
// one Processor, each inside one fence (one fence state) with one or two
// pings waiting in its reorder buffer (alternately: 1.5 on average), for
// sizing --memory-limit and the unit's MemoryMax on small boxes. Run it
// with -benchtime=1x:
//
//	go test -run '^$' -bench HeapAtDevices -benchtime 1x ./evaluator
//
// heap-MB is the whole heap in use, the test binary's own included (what
// a process would hold); devices-MB is what the devices added to it, and
// B/device that per device, pings included (BenchmarkMemoryPerDevice
// counts the per-device overhead without the pings).
func BenchmarkHeapAtDevices(b *testing.B) {
	for _, devices := range []int{1_000, 10_000, 100_000} {
		b.Run("devices="+strconv.Itoa(devices), func(b *testing.B) {
			set := mustFences(b, testFences)
			for range b.N {
				b.StopTimer()
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				b.StartTimer()
				base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
				cfg := engine.DefaultConfig()
				cfg.Hold = engine.MaxHold // keep the pings buffered
				proc, err := NewProcessor(cfg, base, func() *fence.Set { return set }, &countSink{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				clamper := cfg.Clamper()
				ping := func(d int, off time.Duration) {
					id := "truck-" + strconv.Itoa(d)
					pos := payload.Position{Lat: inDepot.lat, Lon: inDepot.lon, TsNs: base.Add(off).UnixNano(), HasTs: true}
					pg := engine.NewPing(clamper, id, &pos, base.Add(off))
					proc.Ingest(&pg)
				}
				for d := range devices {
					ping(d, 0)
				}
				proc.Flush(base) // one ENTER each: one fence state
				for d := range devices {
					ping(d, time.Second)
					if d%2 == 1 {
						ping(d, 2*time.Second)
					}
				}
				b.StopTimer()
				runtime.GC()
				runtime.ReadMemStats(&after)
				if proc.Devices() != devices {
					b.Fatalf("%d devices, want %d", proc.Devices(), devices)
				}
				const mb = 1 << 20
				b.ReportMetric(float64(after.HeapInuse)/mb, "heap-MB")
				b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/mb, "devices-MB")
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(devices), "B/device")
				b.ReportMetric(float64(proc.Buffered())/float64(devices), "pings/device")
				runtime.KeepAlive(proc)
				b.StartTimer()
			}
		})
	}
}
