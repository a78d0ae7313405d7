package capture_test

import (
	"path/filepath"
	"testing"

	"github.com/edgefence/edgefence/capture"
)

// maxQueue bounds the queues below (80 B a record): run them with
// -benchtime 1000000x so that nothing is dropped.
const maxQueue = 1 << 20

// BenchmarkAppendJSON is the writer goroutine's encoding cost per record.
func BenchmarkAppendJSON(b *testing.B) {
	r := sampleRecords(1)[0]
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = capture.AppendJSON(buf[:0], &r)
	}
	b.SetBytes(int64(len(buf) + 1))
}

// BenchmarkWrite is what a publishing client's goroutine pays per
// accepted ping: one non-blocking queue send, while the writer goroutine
// drains the queue concurrently (the queue is made large enough that
// nothing is dropped, the expensive case).
func BenchmarkWrite(b *testing.B) {
	o := capture.DefaultOptions()
	o.Queue = min(b.N, maxQueue)
	w, err := capture.Create(filepath.Join(b.TempDir(), "c.jsonl"), o)
	if err != nil {
		b.Fatal(err)
	}
	recs := sampleRecords(64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		w.Write(&recs[i%len(recs)])
	}
	b.StopTimer()
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(w.Dropped())/float64(b.N), "dropped/op")
}

// BenchmarkSustained is the writer goroutine's throughput: records
// queued, encoded and written to disk (Close included), without drops
// (with -benchtime at most maxQueue).
func BenchmarkSustained(b *testing.B) {
	o := capture.DefaultOptions()
	o.Queue = min(b.N, maxQueue)
	w, err := capture.Create(filepath.Join(b.TempDir(), "c.jsonl"), o)
	if err != nil {
		b.Fatal(err)
	}
	recs := sampleRecords(64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		w.Write(&recs[i%len(recs)])
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(w.Dropped())/float64(b.N), "dropped/op")
}
