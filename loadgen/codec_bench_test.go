package loadgen

import (
	"bytes"
	"testing"
)

// The load generator's per-ping codec work: a PUBLISH encoded into a
// connection's reused buffer, and a PUBACK read and decoded.
func BenchmarkAppendPublish(b *testing.B) {
	payload := []byte(`{"lat":52.512345,"lon":13.401234,"ts":1764583200123,"acc":8.5}`)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendPublish(buf[:0], "devices/lg0d12345/telemetry", 1, 42, payload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadPuback(b *testing.B) {
	stream := bytes.Repeat(AppendPuback(nil, 42), 4096)
	src := bytes.NewReader(stream)
	r := NewReader(src, 512, 1<<16)
	b.ReportAllocs()
	for b.Loop() {
		if r.Buffered() == 0 && src.Len() == 0 {
			src.Reset(stream)
		}
		fh, body, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ParseID(fh, body); err != nil {
			b.Fatal(err)
		}
	}
}
