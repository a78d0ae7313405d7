// Package queue is the bridge's ordered outbound queue: every transition
// decided and not yet acknowledged upstream, one file each in a directory,
// plus late and reject reports waiting in memory. Entries go out in order
// per device, one at a time; a crash leaves each entry's file whole or
// absent; sequence numbers continue across restarts.
package queue

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Entry is one publish waiting for its PUBACK.
type Entry struct {
	Key   string // the device: its entries go out one at a time, in order
	Topic string
	Body  []byte
	// Retain and Transition are set together today; kept apart because
	// restore reads transitions back, and Retain is what goes on the wire.
	// Transitions are durable (Write); other entries are volatile.
	Retain     bool
	Transition bool
	// ExpireAt is the wall time (Unix ns) at which a retained EXIT should
	// expire upstream; 0: never. Kept as an instant, not an interval, so
	// that time spent in the queue counts against it.
	ExpireAt int64
	Ingest   time.Time // the causing ping's ingest instant, for publish latency; zero if unknown; not stored

	seq  uint64
	file string // "" for a volatile entry (late ping, reject)
}

// File is the path of the entry's file; "" for a volatile entry.
func (e *Entry) File() string { return e.file }

// header is the first line of a queue file; the payload follows it.
type header struct {
	Key        string `json:"key"`
	Topic      string `json:"topic"`
	Retain     bool   `json:"retain,omitempty"`
	Transition bool   `json:"transition,omitempty"`
	ExpireAt   int64  `json:"expire_at,omitempty"`
}

// Queue is the outbound queue: every transition decided and not yet
// acknowledged upstream, one file each in dir, plus the late and reject
// reports waiting in memory. Files are named by a sequence number, not a
// timestamp (autopaho's file queue orders by modification time, which
// ties within a clock tick, so it cannot promise the order), and written
// to a temporary name and renamed, so a crash leaves either the whole
// entry or none.
//
// Publishing is pipelined across devices and serialised per device: a
// device's next entry is handed out only when its previous one has been
// acknowledged, so a device's transitions reach the broker in the order
// the engine decided them, and the ones still on disk are always a suffix
// of a device's history.
type Queue struct {
	dir  string
	sync bool // fsync each file and the directory: survives power loss, not only a crash
	log  *slog.Logger

	mu       sync.Mutex
	keys     map[string]*keyQueue
	ready    readyHeap // keys whose head is not in flight, oldest head first
	durable  int       // entries with a file, in flight or not
	volatile int
	seq      uint64
	wake     chan struct{} // an entry became ready
	shrunk   chan struct{} // closed when an entry leaves; replaced
}

// keyQueue is one device's pending entries, oldest first; the head may be
// in flight.
type keyQueue struct {
	key      string
	entries  []*Entry
	inflight bool
	index    int // in the ready heap; -1 when not in it
}

// FileExt ends the name of a queued entry's file: its sequence number,
// zero-padded to 20 digits, then FileExt.
const FileExt = ".msg"

const (
	tmpExt     = ".tmp"
	corruptExt = ".corrupt"
	failedExt  = ".failed"
)

// Open opens (creating) the queue directory and loads what a previous
// run left in it: entries in their sequence order; half-written temporary
// files are removed, unreadable ones set aside as .corrupt.
func Open(dir string, syncWrites bool, log *slog.Logger) (*Queue, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("queue dir: %w", err)
	}
	q := &Queue{dir: dir, sync: syncWrites, log: log, keys: map[string]*keyQueue{},
		wake: make(chan struct{}, 1), shrunk: make(chan struct{})}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("queue dir: %w", err)
	}
	type found struct {
		seq  uint64
		name string
	}
	var files []found
	for _, de := range des {
		name := de.Name()
		switch {
		case de.IsDir():
		case strings.HasSuffix(name, tmpExt):
			// A write the last run did not finish: its transition was
			// never acknowledged as queued, and no PUBACK can follow.
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return nil, fmt.Errorf("queue: remove partial %s: %w", name, err)
			}
		case strings.HasSuffix(name, FileExt):
			seq, err := strconv.ParseUint(strings.TrimSuffix(name, FileExt), 10, 64)
			if err != nil {
				log.Warn("queue: ignoring a file that is not a queue entry", "file", name)
				continue
			}
			files = append(files, found{seq, name})
		}
	}
	slices.SortFunc(files, func(a, b found) int { return cmpUint(a.seq, b.seq) })
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		e, err := readEntry(path)
		if err != nil {
			log.Error("queue: setting aside an unreadable entry", "file", path, "error", err)
			if err := os.Rename(path, path+corruptExt); err != nil {
				return nil, fmt.Errorf("queue: set aside %s: %w", path, err)
			}
			continue
		}
		e.seq = f.seq
		q.seq = max(q.seq, f.seq)
		q.addLocked(e)
	}
	return q, nil
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func readEntry(path string) (*Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	line, body, ok := bytes.Cut(b, []byte{'\n'})
	if !ok {
		return nil, errors.New("no header line")
	}
	var h header
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if h.Topic == "" {
		return nil, errors.New("header: no topic")
	}
	return &Entry{Key: h.Key, Topic: h.Topic, Body: body, Retain: h.Retain, Transition: h.Transition,
		ExpireAt: h.ExpireAt, file: path}, nil
}

// name is the file name of sequence number seq: zero-padded, so that a
// directory listing sorts in queue order for a human too.
func name(seq uint64) string { return fmt.Sprintf("%020d%s", seq, FileExt) }

// Write stores a batch of durable entries, numbering them in order. With
// sync, every file and then the directory is flushed to the device before
// the entries count as queued. On an error nothing of the batch is left
// behind, so that a retry does not queue an entry twice.
func (q *Queue) Write(batch []*Entry) (err error) {
	q.mu.Lock()
	seq := q.seq
	q.mu.Unlock()
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
		if err != nil {
			for _, e := range batch {
				os.Remove(e.file + tmpExt)
				os.Remove(e.file)
			}
		}
	}()
	for _, e := range batch {
		seq++
		e.seq = seq
		e.file = filepath.Join(q.dir, name(seq))
		h, err := json.Marshal(header{Key: e.Key, Topic: e.Topic, Retain: e.Retain, Transition: e.Transition, ExpireAt: e.ExpireAt})
		if err != nil {
			return fmt.Errorf("queue: %w", err)
		}
		f, err := os.OpenFile(e.file+tmpExt, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o640)
		if err != nil {
			return fmt.Errorf("queue: %w", err)
		}
		files = append(files, f)
		if _, err := f.Write(append(append(h, '\n'), e.Body...)); err != nil {
			return fmt.Errorf("queue: write %s: %w", f.Name(), err)
		}
	}
	if q.sync {
		for _, f := range files {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("queue: sync %s: %w", f.Name(), err)
			}
		}
	}
	for _, e := range batch {
		if err := os.Rename(e.file+tmpExt, e.file); err != nil {
			return fmt.Errorf("queue: %w", err)
		}
	}
	if q.sync {
		if err := syncDir(q.dir); err != nil {
			return err
		}
	}
	q.mu.Lock()
	q.seq = seq
	q.mu.Unlock()
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("queue: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("queue: sync %s: %w", dir, err)
	}
	return nil
}

// Add makes entries available to Next, in order: durable ones once Write
// has stored them, volatile ones (no Transition) as they are.
func (q *Queue) Add(batch []*Entry) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range batch {
		if e.file == "" {
			q.seq++
			e.seq = q.seq
		}
		q.addLocked(e)
	}
}

func (q *Queue) addLocked(e *Entry) {
	k := q.keys[e.Key]
	if k == nil {
		k = &keyQueue{key: e.Key, index: -1}
		q.keys[e.Key] = k
	}
	k.entries = append(k.entries, e)
	if e.file != "" {
		q.durable++
	} else {
		q.volatile++
	}
	if len(k.entries) == 1 && !k.inflight {
		heap.Push(&q.ready, k)
		q.signal()
	}
}

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Next hands out the oldest entry whose device has nothing in flight,
// waiting for one until ctx is done (nil then).
func (q *Queue) Next(ctx context.Context) *Entry {
	for {
		q.mu.Lock()
		if q.ready.Len() > 0 {
			k := heap.Pop(&q.ready).(*keyQueue)
			k.inflight = true
			e := k.entries[0]
			q.mu.Unlock()
			return e
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-ctx.Done():
			return nil
		}
	}
}

// Release puts an entry handed out by Next back, unpublished: it is the
// next one of its device again.
func (q *Queue) Release(e *Entry) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := q.keys[e.Key]
	k.inflight = false
	heap.Push(&q.ready, k)
	q.signal()
}

// done removes an entry handed out by Next: acknowledged upstream, or set
// aside. Its file is already gone or renamed.
func (q *Queue) done(e *Entry) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := q.keys[e.Key]
	k.entries[0] = nil
	k.entries = k.entries[1:]
	k.inflight = false
	if len(k.entries) > 0 {
		heap.Push(&q.ready, k)
		q.signal()
	} else {
		delete(q.keys, e.Key)
	}
	if e.file != "" {
		q.durable--
	} else {
		q.volatile--
	}
	close(q.shrunk)
	q.shrunk = make(chan struct{})
}

// Lens returns the number of durable and volatile entries held.
func (q *Queue) Lens() (durable, volatile int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.durable, q.volatile
}

// WaitBelow waits until fewer than n durable entries are held, or ctx is
// done (false then). It is the circuit breaker's wait.
func (q *Queue) WaitBelow(ctx context.Context, n int) bool {
	return q.waitUntil(ctx, func() bool { return q.durable < n })
}

// WaitEmpty waits until nothing is held, or ctx is done (false then).
func (q *Queue) WaitEmpty(ctx context.Context) bool {
	return q.waitUntil(ctx, func() bool { return q.durable+q.volatile == 0 })
}

// waitUntil waits until held reports true (called with q.mu held), or
// ctx is done (false then); every removal wakes it to look again.
func (q *Queue) waitUntil(ctx context.Context, held func() bool) bool {
	for {
		q.mu.Lock()
		if held() {
			q.mu.Unlock()
			return true
		}
		ch := q.shrunk
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// Transitions returns the queued transitions in the order they were
// decided: what restore applies on top of the retained state upstream.
func (q *Queue) Transitions() []*Entry {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*Entry
	for _, k := range q.keys {
		for _, e := range k.entries {
			if e.Transition {
				out = append(out, e)
			}
		}
	}
	slices.SortFunc(out, func(a, b *Entry) int { return cmpUint(a.seq, b.seq) })
	return out
}

// Ack takes an entry handed out by Next out of the queue, acknowledged
// upstream, and deletes its file. A file already gone is not an error:
// nothing else removes them, but a restart must not stall on it. On an
// error the entry still leaves the queue; its file stays, and the next
// start publishes it again.
func (q *Queue) Ack(e *Entry) error {
	defer q.done(e)
	if e.file == "" {
		return nil
	}
	if err := os.Remove(e.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("queue: %w", err)
	}
	return nil
}

// SetAside takes an entry handed out by Next that upstream refused for
// good out of the queue, renaming its file, so that it stays for an
// operator to inspect and is not loaded again.
func (q *Queue) SetAside(e *Entry) error {
	defer q.done(e)
	if e.file == "" {
		return nil
	}
	if err := os.Rename(e.file, e.file+failedExt); err != nil {
		return fmt.Errorf("queue: set aside %s: %w", e.file, err)
	}
	return nil
}

// readyHeap orders devices by the sequence number of their next entry.
type readyHeap []*keyQueue

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i].entries[0].seq < h[j].entries[0].seq }
func (h readyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *readyHeap) Push(x any) {
	k := x.(*keyQueue)
	k.index = len(*h)
	*h = append(*h, k)
}
func (h *readyHeap) Pop() any {
	old := *h
	k := old[len(old)-1]
	old[len(old)-1] = nil
	k.index = -1
	*h = old[:len(old)-1]
	return k
}
