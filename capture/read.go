package capture

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/edgefence/edgefence/evaluator/clock"
)

// MaxLine is the longest line Read considers; a record is a few hundred
// bytes, so anything longer is not one.
const MaxLine = 64 << 10

// Stats says what Read found.
type Stats struct {
	Records int64 // records handed to fn
	// Skipped counts the lines that are not a record: the torn last record
	// of a crashed run, and anything corrupt or longer than MaxLine.
	Skipped int64
	// FirstSkip is the first skipped line and why, for a warning; nil when
	// nothing was skipped.
	FirstSkip *LineError
}

func (s *Stats) add(o Stats) {
	s.Records += o.Records
	s.Skipped += o.Skipped
	if s.FirstSkip == nil {
		s.FirstSkip = o.FirstSkip
	}
}

// LineError is a problem with one line of a capture.
type LineError struct {
	Path string // "" when read from an io.Reader
	Line int64  // 1-based
	Err  error
}

// Error implements error.
func (e *LineError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
}

// Unwrap returns the cause.
func (e *LineError) Unwrap() error { return e.Err }

// errLineTooLong is the cause of a skipped line over MaxLine.
var errLineTooLong = fmt.Errorf("longer than %d bytes", MaxLine)

// Read calls fn for every record of a capture, in file order (the record
// is reused: it is valid only during the call). Lines that
// are not a record are skipped and counted, never fatal, wherever they
// are: a crash tears the last record, and the next run terminates that
// torn line and appends after it, so it ends up in the middle of the
// file. Empty lines are ignored. An error from fn stops Read and is
// returned as a *LineError naming the line; so is an I/O error.
func Read(r io.Reader, fn func(*Record) error) (Stats, error) {
	return read(r, "", fn)
}

func read(r io.Reader, path string, fn func(*Record) error) (Stats, error) {
	var st Stats
	br := bufio.NewReaderSize(r, MaxLine)
	var line int64
	skip := func(err error) {
		st.Skipped++
		if st.FirstSkip == nil {
			st.FirstSkip = &LineError{Path: path, Line: line, Err: err}
		}
	}
	var rec Record
	for {
		b, err := br.ReadSlice('\n')
		line++
		if errors.Is(err, bufio.ErrBufferFull) {
			skip(errLineTooLong)
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == nil {
				continue
			}
			b = nil // the rest of the long line
		}
		if err != nil && err != io.EOF {
			return st, &LineError{Path: path, Line: line, Err: err}
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			if perr := parse(t, &rec); perr != nil {
				skip(perr)
			} else {
				st.Records++
				if ferr := fn(&rec); ferr != nil {
					return st, &LineError{Path: path, Line: line, Err: ferr}
				}
			}
		}
		if err == io.EOF {
			return st, nil
		}
	}
}

// wire is a record line as encoding/json sees it; pointers tell an absent
// field from a zero one. Reading is off the hot path, so reflection is fine.
type wire struct {
	Seq    *uint64  `json:"seq"`
	Device *string  `json:"device"`
	Lat    *float64 `json:"lat"`
	Lon    *float64 `json:"lon"`
	Acc    *float64 `json:"acc"`
	Stamp  *int64   `json:"stamp"`
	Event  *int64   `json:"event"`
	Clamp  string   `json:"clamp"`
	Ingest *int64   `json:"ingest"`
}

// errMissing is the cause of a skipped line without a required field.
var errMissing = errors.New("not a record: seq, device, lat, lon, event and ingest are required")

// parse reads one line into r, overwriting every field.
func parse(b []byte, r *Record) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Seq == nil || w.Device == nil || *w.Device == "" || w.Lat == nil || w.Lon == nil || w.Event == nil || w.Ingest == nil {
		return errMissing
	}
	clamp, ok := clock.ParseClampReason(w.Clamp)
	if !ok {
		return fmt.Errorf("unknown clamp reason %q", w.Clamp)
	}
	*r = Record{Seq: *w.Seq, Device: *w.Device, Lat: *w.Lat, Lon: *w.Lon, Event: *w.Event, Clamp: clamp, Ingest: *w.Ingest}
	if w.Acc != nil {
		r.Acc, r.HasAcc = *w.Acc, true
	}
	if w.Stamp != nil {
		r.Stamp, r.HasStamp = *w.Stamp, true
	}
	return nil
}

// Rotated lists the files of the capture at path, oldest first:
// path.N … path.1, then path itself, those that exist. The numbered
// files are looked for from 1 up to the first one missing.
func Rotated(path string) ([]string, error) {
	var older []string
	for i := 1; ; i++ {
		p := path + "." + strconv.Itoa(i)
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			return nil, fmt.Errorf("capture: %w", err)
		}
		older = append(older, p)
	}
	out := make([]string, 0, len(older)+1)
	for i := len(older) - 1; i >= 0; i-- {
		out = append(out, older[i])
	}
	switch _, err := os.Stat(path); {
	case err == nil:
		out = append(out, path)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("capture: %w", err)
	case len(out) == 0:
		return nil, fmt.Errorf("capture: %w", err)
	}
	return out, nil
}

// ReadFiles reads the captures at paths in turn, each with its rotated
// predecessors first (see Rotated); a file named twice, directly or by
// rotation, is read once. It returns the files read and their totals;
// lines are skipped as by Read.
func ReadFiles(fn func(*Record) error, paths ...string) ([]string, Stats, error) {
	var st Stats
	var files []string
	seen := make(map[string]bool)
	for _, p := range paths {
		rot, err := Rotated(p)
		if err != nil {
			return files, st, err
		}
		for _, f := range rot {
			if key := filepath.Clean(f); !seen[key] {
				seen[key] = true
				files = append(files, f)
			}
		}
	}
	for _, f := range files {
		fst, err := readFile(f, fn)
		st.add(fst)
		if err != nil {
			return files, st, err
		}
	}
	return files, st, nil
}

func readFile(path string, fn func(*Record) error) (Stats, error) {
	f, err := os.Open(path)
	if err != nil {
		return Stats{}, fmt.Errorf("capture: %w", err)
	}
	defer f.Close()
	return read(f, path, fn)
}
