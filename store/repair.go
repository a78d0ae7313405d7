package store

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"go.etcd.io/bbolt"
)

// Report is what Check or Repair found in a data dir's store.
type Report struct {
	Path        string
	Records     int      // readable retained messages (Repair: copied)
	Meta        []string // what is wrong with bbolt's two meta pages (see checkMeta)
	Bad         []string // keys whose value does not decode (Repair: left behind)
	Implausible []string // the server's records Verify refused, with why (Repair: left behind)
	Problems    []string // what bbolt's check found
	Stopped     []string // why reading the records stopped short of their end
	Aside       string   // Repair: where the damaged file was moved
}

// Verify judges one of the server's own records (IsServer) by its topic
// and payload: an error makes it implausible.
type Verify func(topic string, payload []byte) error

// Damaged reports whether anything is wrong.
func (r *Report) Damaged() bool {
	return len(r.Meta) > 0 || len(r.Bad) > 0 || len(r.Implausible) > 0 || len(r.Problems) > 0 || len(r.Stopped) > 0
}

// Print writes the report as `edgefence store check|repair` shows it: a
// line per problem, then whether the store is ok and how many records it
// read.
func (r *Report) Print(w io.Writer) {
	for _, p := range r.Meta {
		fmt.Fprintf(w, "%s: %s\n", r.Path, p)
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "%s: bbolt: %s\n", r.Path, p)
	}
	for _, k := range r.Bad {
		fmt.Fprintf(w, "%s: unreadable record %.128q\n", r.Path, k)
	}
	for _, p := range r.Implausible {
		fmt.Fprintf(w, "%s: implausible record %s\n", r.Path, p)
	}
	for _, s := range r.Stopped {
		fmt.Fprintf(w, "%s: %s\n", r.Path, s)
	}
	state := "ok"
	if r.Damaged() {
		state = "damaged"
	}
	fmt.Fprintf(w, "%s: %s, %d readable records\n", r.Path, state, r.Records)
}

// Check opens dir's store read-only (the broker must be stopped: ErrLocked
// otherwise), checks bbolt's two meta pages, runs bbolt's consistency
// check, reads every record, decodes each topic's newest and has verify
// (if not nil) judge the server's own. It changes nothing. A file bbolt
// cannot open at all is an error wrapping ErrDamaged.
func Check(dir string, verify Verify) (*Report, error) {
	path := filepath.Join(dir, File)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	db, err := openDB(path, true)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r := &Report{Path: path, Meta: checkMeta(path), Problems: inspect(db, path)}
	live := read(db, r, verify)
	r.Records = len(live)
	return r, nil
}

// entry is a topic's newest record found by read.
type entry struct {
	topic string
	rank  uint64 // its sequence; 0 in the mochi layout, older than any
	msg   []byte // empty: a tombstone
}

// read reads every record of db, both layouts, and returns each topic's
// newest that decodes and that verify (if not nil) finds plausible, in
// the order they were written, reporting the others and why reading
// stopped short in r. A superseded record is not decoded: nothing reads
// it, and compaction removes it.
func read(db *bbolt.DB, r *Report, verify Verify) []entry {
	newest := map[string]entry{}
	keep := func(topic, msg []byte, rank uint64) {
		if e, ok := newest[string(topic)]; !ok || rank >= e.rank {
			newest[string(topic)] = entry{string(topic), rank, bytes.Clone(msg)}
		}
	}
	r.Stopped = walk(db, mochiBucket, func(k, v []byte) {
		if topic, ok := bytes.CutPrefix(k, []byte(keyPrefix)); ok {
			keep(topic, v, 0)
		}
	})
	r.Stopped = append(r.Stopped, walk(db, recordsBucket, func(k, v []byte) {
		seq, ok := parseKey(k)
		topic, msg, err := parseRecord(v)
		if !ok || err != nil {
			r.Bad = append(r.Bad, keyName(k))
			return
		}
		keep(topic, msg, seq)
	})...)
	var live []entry
	for _, e := range newest {
		if len(e.msg) == 0 {
			continue // deleted
		}
		m, err := decode([]byte(e.topic), e.msg)
		if err != nil {
			r.Bad = append(r.Bad, keyPrefix+e.topic)
			continue
		}
		if verify != nil && IsServer(m) {
			if err := verify(m.TopicName, m.Payload); err != nil {
				r.Implausible = append(r.Implausible, fmt.Sprintf("%.128q: %v", keyPrefix+e.topic, err))
				continue
			}
		}
		live = append(live, e)
	}
	slices.Sort(r.Bad)
	slices.Sort(r.Implausible)
	slices.SortFunc(live, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), strings.Compare(a.topic, b.topic))
	})
	return live
}

// Repair copies each topic's newest record, if it is readable and
// plausible (verify, as in Check), into a fresh file, moves the damaged
// file aside (edgefence.db.damaged-<time>, never deleted) and puts the
// fresh one in its place. With a meta page invalid, what is copied is the
// commit of the valid one. A store Check finds nothing wrong with is left
// alone. A file bbolt cannot open is left alone too, with an error:
// nothing of it can be read.
func Repair(dir string, verify Verify, log *slog.Logger) (*Report, error) {
	r, err := Check(dir, verify)
	if err != nil || !r.Damaged() {
		return r, err
	}
	path := r.Path
	fresh := path + ".repair"
	_ = os.Remove(fresh)
	src, err := openDB(path, true)
	if err != nil {
		return r, err
	}
	dst, err := bbolt.Open(fresh, 0o600, &bbolt.Options{Timeout: lockWait})
	if err != nil {
		src.Close()
		return r, fmt.Errorf("repair: %w", err)
	}
	r.Records, r.Bad, r.Implausible = 0, nil, nil
	live := read(src, r, verify)
	format := readFormat(src)
	src.Close()
	copyErr := dst.Update(func(tx *bbolt.Tx) error {
		if format != nil { // the copied records are marked as they were
			fb, err := tx.CreateBucketIfNotExists(formatBucket)
			if err != nil {
				return err
			}
			if err := fb.Put(formatKey, format); err != nil {
				return err
			}
		}
		b, err := tx.CreateBucketIfNotExists(recordsBucket)
		if err != nil {
			return err
		}
		b.FillPercent = 1
		for i, e := range live {
			if err := b.Put(seqKey(nil, uint64(i)+1), appendRecord(nil, e.topic, e.msg)); err != nil {
				return err
			}
		}
		return nil
	})
	if err := dst.Close(); err != nil && copyErr == nil {
		copyErr = err
	}
	if copyErr != nil {
		os.Remove(fresh)
		return r, fmt.Errorf("repair: writing %s: %w", fresh, copyErr)
	}
	r.Records = len(live)
	r.Aside = fmt.Sprintf("%s.damaged-%s", path, time.Now().UTC().Format("20060102T150405Z"))
	if err := os.Rename(path, r.Aside); err != nil {
		os.Remove(fresh)
		return r, fmt.Errorf("repair: %w", err)
	}
	if err := os.Rename(fresh, path); err != nil {
		return r, fmt.Errorf("repair: the damaged store is at %s, the repaired one at %s: %w", r.Aside, fresh, err)
	}
	if err := syncDir(dir); err != nil {
		return r, fmt.Errorf("repair: %w", err)
	}
	log.Warn("store: repaired: copied the readable records into a fresh file; the damaged one is kept",
		"file", path, "records", r.Records, "left_behind", len(r.Bad)+len(r.Implausible), "damaged_file", r.Aside)
	return r, nil
}

// walk calls fn with each record of db's bucket name. It reads forward
// from the first key until bbolt cannot read on (a damaged page, or one
// past the end of a cut file: a fault made a panic), then backward from
// the last key down to where it stopped, so that only what sits on the
// damaged pages is missed; why it stopped is returned.
func walk(db *bbolt.DB, name []byte, fn func(k, v []byte)) (stopped []string) {
	var first []byte // the last key the forward pass read
	done, err := walkFrom(db, name, true, nil, fn, &first)
	if err != nil {
		stopped = append(stopped, fmt.Sprintf("reading %s forward stopped after %s: %v", name, keyName(first), err))
	}
	if done {
		return stopped
	}
	var last []byte
	if _, err := walkFrom(db, name, false, first, fn, &last); err != nil {
		stopped = append(stopped, fmt.Sprintf("reading %s backward stopped before %s: %v", name, keyName(last), err))
	}
	return stopped
}

// walkFrom is one pass of walk, forward from the first key or backward
// from the last down to (not including) until; *at is the last key read.
// done reports a pass that reached its end.
func walkFrom(db *bbolt.DB, name []byte, forward bool, until []byte, fn func(k, v []byte), at *[]byte) (done bool, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	err = db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(name)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		k, v := c.First()
		if !forward {
			k, v = c.Last()
		}
		for k != nil && (forward || bytes.Compare(k, until) > 0) {
			fn(k, v)
			*at = bytes.Clone(k)
			if forward {
				k, v = c.Next()
			} else {
				k, v = c.Prev()
			}
		}
		return nil
	})
	return err == nil, err
}

// readFormat is db's format (see upgrade), nil if none or unreadable.
func readFormat(db *bbolt.DB) (format []byte) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			format = nil
		}
	}()
	_ = db.View(func(tx *bbolt.Tx) error {
		if fb := tx.Bucket(formatBucket); fb != nil {
			format = bytes.Clone(fb.Get(formatKey))
		}
		return nil
	})
	return format
}
