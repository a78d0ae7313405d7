package capture_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator/engine"
)

// Devices written concurrently come back whole: every ping once, each
// device's in the order given, numbered 1…n across the file.
func TestPingWriterKeepsEveryPingInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.jsonl")
	w, err := capture.CreatePingWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	devices := []string{"a", "b", "c", "d"}
	const per = 500
	var wg sync.WaitGroup
	for _, dev := range devices {
		wg.Go(func() {
			pings := make([]engine.Ping, per)
			for i := range pings {
				at := base + int64(i)*1e6
				pings[i] = engine.Ping{Device: dev, Lat: 52.5, Lon: 13.4, Stamp: at, HasStamp: true, Event: at, Ingest: time.Unix(0, at)}
			}
			w.WritePings(pings)
		})
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	next := map[string]int64{}
	var seq uint64
	_, st, err := capture.ReadFiles(func(r *capture.Record) error {
		seq++
		if r.Seq != seq {
			t.Fatalf("record %d numbered %d", seq, r.Seq)
		}
		if want := base + next[r.Device]*1e6; r.Event != want {
			t.Fatalf("device %s: event %d, want %d", r.Device, r.Event, want)
		}
		next[r.Device]++
		return nil
	}, path)
	if err != nil || st.Records != int64(len(devices)*per) || st.Skipped != 0 {
		t.Fatalf("read %+v, %v; want %d records", st, err, len(devices)*per)
	}
}
