package capture_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/edgefence/edgefence/capture"
)

// Records written across many rotations read back identical and in order.
func TestRoundTripWithRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capture.jsonl")
	o := fastOptions()
	o.MaxBytes, o.Keep = 1000, 100
	w := create(t, path, o)
	want := sampleRecords(60)
	writeAll(t, w, want)
	closeWriter(t, w)

	files, err := capture.Rotated(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("%d files, want a rotation every few records: %v", len(files), files)
	}
	for _, f := range files {
		if n := fileSize(t, f); n > o.MaxBytes || n == 0 {
			t.Errorf("%s: %d bytes, want 1..%d", f, n, o.MaxBytes)
		}
	}
	got, st := readAll(t, path)
	if st.Skipped != 0 || st.Records != int64(len(want)) {
		t.Errorf("stats %+v, want %d records, none skipped", st, len(want))
	}
	if !slices.Equal(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	if w.Written() != uint64(len(want)) || w.Dropped() != 0 {
		t.Errorf("written %d, dropped %d; want %d, 0", w.Written(), w.Dropped(), len(want))
	}
}

// Keep bounds the rotated files; what is left is the newest records.
func TestRotationKeepsOnlyKeepFiles(t *testing.T) {
	for _, keep := range []int{0, 2} {
		t.Run("keep="+strconv.Itoa(keep), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "capture.jsonl")
			o := fastOptions()
			o.MaxBytes, o.Keep = 600, keep
			w := create(t, path, o)
			all := sampleRecords(60)
			writeAll(t, w, all)
			closeWriter(t, w)
			files, err := capture.Rotated(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != keep+1 {
				t.Fatalf("files %v, want %d", files, keep+1)
			}
			got, _ := readAll(t, path)
			if len(got) == 0 || !slices.Equal(got, all[len(all)-len(got):]) {
				t.Errorf("read %d records, want the newest of the 60 in order: %+v", len(got), got)
			}
		})
	}
}

// A crash tears the last record: the reader skips it, and the next run
// terminates it and appends after it without losing a record of its own.
func TestTornLastLineIsSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capture.jsonl")
	recs := sampleRecords(7)
	w := create(t, path, fastOptions())
	writeAll(t, w, recs[:5])
	closeWriter(t, w)
	if err := os.Truncate(path, fileSize(t, path)-10); err != nil {
		t.Fatal(err)
	}

	got, st := readAll(t, path)
	if !slices.Equal(got, recs[:4]) {
		t.Errorf("torn capture read back %+v, want the first 4 records", got)
	}
	if st.Skipped != 1 || st.FirstSkip == nil || st.FirstSkip.Line != 5 || st.FirstSkip.Path != path {
		t.Errorf("stats %+v (first skip %v), want line 5 of %s skipped", st, st.FirstSkip, path)
	}

	w = create(t, path, fastOptions())
	writeAll(t, w, recs[5:])
	closeWriter(t, w)
	got, st = readAll(t, path)
	if want := append(slices.Clone(recs[:4]), recs[5:]...); !slices.Equal(got, want) {
		t.Errorf("after a restart read back %+v, want records 1-4 and 6-7", got)
	}
	if st.Skipped != 1 || st.FirstSkip.Line != 5 {
		t.Errorf("after a restart: stats %+v, want line 5 skipped", st)
	}
}

// Like kill -9: the Writer is never closed. What the periodic flush wrote
// reads back without error, a prefix of what was written.
func TestUnclosedCaptureIsReadable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capture.jsonl")
	o := fastOptions()
	o.Flush = 20 * time.Millisecond
	w := create(t, path, o)
	t.Cleanup(func() { _ = w.Close() }) // only so the goroutine does not leak past the test
	recs := sampleRecords(10)
	writeAll(t, w, recs)
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, st := readAll(t, path)
		if !slices.Equal(got, recs[:len(got)]) || st.Skipped > 1 {
			t.Fatalf("unclosed capture read back %+v (%+v), want a prefix of the records", got, st)
		}
		if len(got) == len(recs) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d records flushed within 5s", len(got), len(recs))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A full queue drops and counts instead of blocking; what is kept is in
// order, and nothing is both written and dropped.
func TestFullQueueDropsAndCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capture.jsonl")
	o := fastOptions()
	o.Queue = 1
	w := create(t, path, o)
	const n = 20000
	recs := sampleRecords(n)
	start := time.Now()
	queued := 0
	for i := range recs {
		if w.Write(&recs[i]) {
			queued++
		}
	}
	t.Logf("%d Writes in %v, %d queued", n, time.Since(start), queued)
	closeWriter(t, w)
	if w.Written()+w.Dropped() != n || w.Written() != uint64(queued) {
		t.Errorf("written %d + dropped %d, want %d with %d written", w.Written(), w.Dropped(), n, queued)
	}
	got, _ := readAll(t, path)
	if uint64(len(got)) != w.Written() {
		t.Errorf("read %d records, written %d", len(got), w.Written())
	}
	for i := 1; i < len(got); i++ {
		if got[i].Seq <= got[i-1].Seq {
			t.Fatalf("record %d has seq %d after %d", i, got[i].Seq, got[i-1].Seq)
		}
	}
	if w.Write(&recs[0]) {
		t.Error("Write after Close was queued")
	}
	if w.Dropped() != n-w.Written()+1 {
		t.Errorf("Write after Close not counted as dropped")
	}
}

func TestCreateErrors(t *testing.T) {
	o := capture.DefaultOptions()
	o.Keep = -1
	if _, err := capture.Create(filepath.Join(t.TempDir(), "c"), o); !errors.Is(err, capture.ErrOptions) {
		t.Errorf("keep -1: %v, want ErrOptions", err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-dir", "c")
	if _, err := capture.Create(missing, capture.DefaultOptions()); err == nil {
		t.Error("Create in a missing directory succeeded")
	}
	if _, _, err := capture.ReadFiles(func(*capture.Record) error { return nil }, missing); err == nil {
		t.Error("ReadFiles of a missing capture succeeded")
	}
}
