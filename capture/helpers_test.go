package capture_test

import (
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator/clock"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// base is 2026-12-01T00:00:00Z in Unix ns.
const base = int64(1_796_083_200_000_000_000)

// sampleRecords returns n records covering every optional field, clamp
// reason and the awkward device ids (quotes, control bytes, non-ASCII).
func sampleRecords(n int) []capture.Record {
	devices := []string{"truck-42", `quote"back\slash`, "ünïcødé-🚚", "tab\tnl\nctl\x01\x7f", "x"}
	clamps := append([]clock.ClampReason{clock.ClampNone}, clock.ClampReasons()...)
	out := make([]capture.Record, n)
	for i := range out {
		ev := base + int64(i)*1_000_000_123
		r := capture.Record{
			Seq:    uint64(i + 1),
			Device: devices[i%len(devices)],
			Lat:    52.52 + float64(i)*1e-7,
			Lon:    -13.4 - float64(i)/3,
			Event:  ev,
			Clamp:  clamps[i%len(clamps)],
			Ingest: ev + 17_123_456,
		}
		if i%2 == 0 {
			r.Acc, r.HasAcc = 8.5+float64(i)/7, true
		}
		if r.Clamp != clock.ClampMissing {
			r.Stamp, r.HasStamp = ev-int64(i), true
		}
		out[i] = r
	}
	return out
}

// readAll reads the capture at path (with its rotated files).
func readAll(t *testing.T, path string) ([]capture.Record, capture.Stats) {
	t.Helper()
	var got []capture.Record
	_, st, err := capture.ReadFiles(func(r *capture.Record) error {
		got = append(got, *r)
		return nil
	}, path)
	if err != nil {
		t.Fatalf("ReadFiles: %v", err)
	}
	return got, st
}

// fastOptions are DefaultOptions with a short flush interval.
func fastOptions() capture.Options {
	o := capture.DefaultOptions()
	o.Flush = 10 * time.Millisecond
	return o
}

func create(t *testing.T, path string, o capture.Options) *capture.Writer {
	t.Helper()
	w, err := capture.Create(path, o)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return w
}

func writeAll(t *testing.T, w *capture.Writer, recs []capture.Record) {
	t.Helper()
	for i := range recs {
		if !w.Write(&recs[i]) {
			t.Fatalf("Write of record %d dropped", i)
		}
	}
}

func closeWriter(t *testing.T, w *capture.Writer) {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}
