package capture_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/edgefence/edgefence/capture"
)

const (
	line1 = `{"seq":1,"device":"a","lat":1,"lon":2,"event":10,"ingest":11}`
	line2 = `{"seq":2,"device":"a","lat":1,"lon":2,"stamp":5,"event":10,"clamp":"before_floor","ingest":12}`
)

// Corrupt lines anywhere are skipped and counted, the first one named.
func TestReadSkipsWhatIsNotARecord(t *testing.T) {
	in := strings.Join([]string{
		line1,
		`garbage`,
		"",
		`{"seq":3,"device":"a","lat":1,"lon":2,"event":10}`,                       // no ingest
		`{"seq":3,"device":"a","lat":1,"lon":2,"event":1.5,"ingest":11}`,          // fractional ns
		`{"seq":3,"device":"a","lat":1,"lon":2,"event":1,"clamp":"x","ingest":1}`, // unknown clamp
		strings.Repeat("x", capture.MaxLine+10),
		line2,
		`{"seq":4,"dev`,
	}, "\n")
	var seqs []uint64
	st, err := capture.Read(strings.NewReader(in), func(r *capture.Record) error {
		seqs = append(seqs, r.Seq)
		return nil
	})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(seqs) != 2 || seqs[0] != 1 || seqs[1] != 2 || st.Records != 2 {
		t.Errorf("records %v (%d), want seq 1 and 2", seqs, st.Records)
	}
	if st.Skipped != 6 {
		t.Errorf("skipped %d, want 6", st.Skipped)
	}
	if st.FirstSkip == nil || st.FirstSkip.Line != 2 || !strings.HasPrefix(st.FirstSkip.Error(), "line 2: ") {
		t.Errorf("first skip %v, want line 2", st.FirstSkip)
	}
}

// A last line without its newline is still a record when it is whole.
func TestReadWholeLastLineWithoutNewline(t *testing.T) {
	st, err := capture.Read(strings.NewReader(line1+"\n"+line2), func(*capture.Record) error { return nil })
	if err != nil || st.Records != 2 || st.Skipped != 0 {
		t.Errorf("Read: %+v, %v; want 2 records", st, err)
	}
}

// An error from fn stops the read and names the line.
func TestReadStopsOnCallbackError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	_, err := capture.Read(strings.NewReader(line1+"\n"+line2+"\n"), func(*capture.Record) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	var le *capture.LineError
	if !errors.Is(err, stop) || !errors.As(err, &le) || le.Line != 2 {
		t.Errorf("err %v, want stop at line 2", err)
	}
}

// Naming the capture reads its rotated files oldest first; a file named
// again (a shell glob of FILE*) is read once.
func TestReadFilesOrderAndDedup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.jsonl")
	o := fastOptions()
	o.MaxBytes, o.Keep = 400, 10
	w := create(t, path, o)
	recs := sampleRecords(12)
	writeAll(t, w, recs)
	closeWriter(t, w)
	files, err := capture.Rotated(path)
	if err != nil || len(files) < 3 {
		t.Fatalf("Rotated: %v, %v", files, err)
	}
	var seqs []uint64
	read, st, err := capture.ReadFiles(func(r *capture.Record) error {
		seqs = append(seqs, r.Seq)
		return nil
	}, path, files[1], files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(read, files) || st.Records != int64(len(recs)) {
		t.Fatalf("read %d records from %v, want %d from %v", st.Records, read, len(recs), files)
	}
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("seqs %v, want 1..%d in order", seqs, len(recs))
		}
	}
	// A rotated file named on its own is just that file.
	read, _, err = capture.ReadFiles(func(*capture.Record) error { return nil }, files[1])
	if err != nil || !slices.Equal(read, files[1:2]) {
		t.Errorf("ReadFiles(%s) read %v, %v", files[1], read, err)
	}
}
