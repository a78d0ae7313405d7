package store

import (
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"github.com/mochi-mqtt/server/v2/packets"
)

// BenchmarkWrite measures one Write of a batch of transitions (the
// publisher's commit) into a store holding 10,000 of them, each the size
// of a real one (about 760 bytes stored): ns/op and cpu-ns/op (the
// process's user + system time) per transition, the commit and its
// fdatasyncs shared by the batch; and the longest Write, compaction's
// share included.
func BenchmarkWrite(b *testing.B) {
	for _, batch := range []int{1, 16, 128, 512, 2048} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) { benchWrite(b, batch, true) })
	}
}

// BenchmarkCompaction is BenchmarkWrite at the ceiling's batch (about
// 180 transitions in 20 ms) with compaction on and off: what compaction
// adds to a transition's CPU and to the longest commit.
func BenchmarkCompaction(b *testing.B) {
	for _, on := range []bool{true, false} {
		b.Run(fmt.Sprintf("compaction=%v", on), func(b *testing.B) { benchWrite(b, 180, on) })
	}
}

func benchWrite(b *testing.B, batch int, compaction bool) {
	s := open(b, b.TempDir())
	defer s.Close()
	if !compaction {
		s.tuning.least = 1 << 62
	}
	const devices = 10_000
	ws := make([]Write, devices)
	for i := range ws {
		ws[i] = msg(fmt.Sprintf("geofence/zone-%02d/dev-%05d", i%40, i), fmt.Sprintf(`{"device":"dev-%05d","fence":"zone-%02d","type":"ENTER","event_time":"2026-12-06T05:56:48.534Z","ts":1796536608534,"server_ts":1796536608522,"clock_offset_ms":11,"lat":52.304542,"lon":13.049236,"clamped":false,"ingest_time":"2026-12-06T05:56:48.529Z","decided_time":"2026-12-06T05:56:50.655Z"}`, i, i%40))
	}
	if err := s.Write(ws); err != nil {
		b.Fatal(err)
	}
	// A batch is the transitions of devices anywhere in the key
	// space, as the engine decides them.
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
	b.ResetTimer()
	cpu0 := cpuTime()
	var worst time.Duration
	for i := 0; i < b.N; i += batch {
		start := (i * 7919) % (devices - batch)
		t0 := time.Now()
		if err := s.Write(ws[start : start+min(batch, b.N-i)]); err != nil {
			b.Fatal(err)
		}
		worst = max(worst, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(worst.Microseconds())/1000, "worst-commit-ms")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEncode measures encoding one stored transition: with
// encoding/json (storage.Message's MarshalBinary) and appendMessage.
func BenchmarkEncode(b *testing.B) {
	m := storage.Message{
		Properties:  storage.MessageProperties{MessageExpiryInterval: 86400, ContentType: "application/json", PayloadFormat: 1},
		Payload:     []byte(`{"device":"dev-00042","fence":"zone-07","type":"EXIT","event_time":"2026-12-06T05:56:48.534Z","ts":1796536608534,"server_ts":1796536608522,"clock_offset_ms":11,"lat":52.304542,"lon":13.049236,"clamped":false,"ingest_time":"2026-12-06T05:56:48.529Z","decided_time":"2026-12-06T05:56:50.655Z"}`),
		T:           serverType,
		ID:          keyPrefix + "geofence/zone-07/dev-00042",
		Client:      "edgefence-engine",
		Origin:      "edgefence-engine",
		TopicName:   "geofence/zone-07/dev-00042",
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1, Retain: true},
		Created:     1796536611,
	}
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = m.MarshalBinary()
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			appendMessage(make([]byte, 0, 1024), &m)
		}
	})
}
