package store

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkWrite measures one Write of a batch of transitions (the
// publisher's commit) into a store holding 10,000 of them, each the size
// of a real one (about 760 bytes stored): ns/op and cpu-ns/op (the
// process's user + system time) per transition, the commit and its
// fdatasyncs shared by the batch.
func BenchmarkWrite(b *testing.B) {
	for _, batch := range []int{1, 16, 128, 512, 2048} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			s := open(b, b.TempDir())
			defer s.Close()
			const devices = 10_000
			ws := make([]Write, devices)
			for i := range ws {
				ws[i] = msg(fmt.Sprintf("geofence/zone-%02d/dev-%05d", i%40, i), fmt.Sprintf(`{"device":"dev-%05d","fence":"zone-%02d","type":"ENTER","event_time":"2026-12-06T05:56:48.534Z","ts":1796536608534,"server_ts":1796536608522,"clock_offset_ms":11,"lat":52.304542,"lon":13.049236,"clamped":false,"ingest_time":"2026-12-06T05:56:48.529Z","decided_time":"2026-12-06T05:56:50.655Z"}`, i, i%40))
			}
			if err := s.Write(ws); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			for i := 0; i < b.N; i += batch {
				start := (i * 7919) % (devices - batch) // spread over the key space
				if err := s.Write(ws[start : start+min(batch, b.N-i)]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
