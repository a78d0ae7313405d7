package broker

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// appendLog is a key-value file that is only ever appended to: each commit
// writes its records in one write and one fdatasync, and the file is
// rewritten with only the live records once it has grown to twice their
// size. It replaced bbolt for the store because a bbolt commit rewrites
// every B+tree page a key lands on — with transition topics spread over
// the whole key space, a page per transition — and syncs twice: 28 % of
// the broker's CPU at the --data-dir ceiling.
//
// A record is
//
//	length uint32 (of what follows the checksum)
//	crc32c uint32 (of what follows it)
//	key length uint16, key, value (empty: the key is deleted)
//
// little endian. A torn or corrupt record ends the log: opening truncates
// it there (a crash mid-write loses at most the commit being written,
// which nobody was told had been stored).
//
// Only the keys and where their values are stay in memory; values are
// read back from the file (the store scans them once, at start).
type appendLog struct {
	mu   sync.RWMutex // commit and compact write; get and keysWithPrefix read
	path string
	f    *os.File
	keys map[string]valueRef
	size int64 // of the file
	live int64 // bytes of the records the keys point at
	// After a failed rewrite, the size the file must reach before the
	// next try: a full disk does not make every commit try (and log) again.
	retryAt int64
}

// valueRef is where a key's value is in the file.
type valueRef struct {
	off int64
	n   int32
}

const (
	logHeader     = 8
	maxLogKey     = 0xffff
	maxLogRecord  = 64 << 20
	compactAbove  = 4 << 20 // bytes: smaller files are never rewritten
	compactFactor = 2       // rewrite once the file is this many times its live records
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errCorruptRecord ends a log's readable part.
var errCorruptRecord = errors.New("corrupt record")

// errCompacting wraps a failed rewrite after a commit that succeeded.
var errCompacting = errors.New("compacting the log")

// openAppendLog opens (creating) the log at path and reads its keys. It
// reports how many bytes of a torn or corrupt tail it cut off.
func openAppendLog(path string) (l *appendLog, cut int64, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	l = &appendLog{path: path, f: f, keys: make(map[string]valueRef)}
	end, err := l.load(bufio.NewReaderSize(f, 256<<10), st.Size())
	if err != nil && !errors.Is(err, errCorruptRecord) && !errors.Is(err, io.ErrUnexpectedEOF) {
		f.Close()
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	if cut = st.Size() - end; cut > 0 {
		if err := f.Truncate(end); err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("truncate %s to its last whole record: %w", path, err)
		}
	}
	l.size = end
	return l, cut, nil
}

// load reads records from r (the file from its start, size bytes) into
// the index and returns the offset after the last whole, intact one.
func (l *appendLog) load(r io.Reader, size int64) (int64, error) {
	return eachRecord(r, size, func(off int64, rec []byte, keyLen int) error {
		l.apply(string(rec[2:2+keyLen]), off, len(rec), keyLen)
		return nil
	})
}

// eachRecord calls fn with each whole, intact record read from r (a log
// of size bytes, from its start): its offset, the record after its header
// (valid until the next call) and its key's length. It returns the offset
// after the last one, and why it stopped (nil at the end of r); fn's error
// stops it. A length running past size is a torn record, found without
// reading (or allocating) that much.
func eachRecord(r io.Reader, size int64, fn func(off int64, rec []byte, keyLen int) error) (int64, error) {
	var off int64
	var head [logHeader]byte
	var rec []byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			if err == io.EOF {
				return off, nil
			}
			return off, err
		}
		n := binary.LittleEndian.Uint32(head[0:4])
		if n < 2 || n > maxLogRecord {
			return off, errCorruptRecord
		}
		if off+logHeader+int64(n) > size {
			return off, io.ErrUnexpectedEOF
		}
		rec = slices.Grow(rec[:0], int(n))[:n]
		if _, err := io.ReadFull(r, rec); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // a header without its record: torn
			}
			return off, err
		}
		if crc32.Checksum(rec, crcTable) != binary.LittleEndian.Uint32(head[4:8]) {
			return off, errCorruptRecord
		}
		k := int(binary.LittleEndian.Uint16(rec[0:2]))
		if 2+k > len(rec) {
			return off, errCorruptRecord
		}
		if err := fn(off, rec, k); err != nil {
			return off, err
		}
		off += logHeader + int64(n)
	}
}

// apply points key at the record of n bytes (after the header) at off, or
// deletes it when the record has no value.
func (l *appendLog) apply(key string, off int64, n, keyLen int) {
	if old, ok := l.keys[key]; ok {
		l.live -= logHeader + 2 + int64(len(key)) + int64(old.n)
		delete(l.keys, key)
	}
	if vn := n - 2 - keyLen; vn > 0 {
		l.keys[key] = valueRef{off: off + logHeader + 2 + int64(keyLen), n: int32(vn)}
		l.live += logHeader + int64(n)
	}
}

// appendRecord appends key's record to buf.
func appendRecord(buf []byte, key string, value []byte) []byte {
	n := 2 + len(key) + len(value)
	start := len(buf)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(n))
	buf = binary.LittleEndian.AppendUint32(buf, 0)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(key)))
	buf = append(buf, key...)
	buf = append(buf, value...)
	binary.LittleEndian.PutUint32(buf[start+4:], crc32.Checksum(buf[start+logHeader:], crcTable))
	return buf
}

// commit writes batch (key → value; nil deletes) and waits for the disk.
// On failure nothing of it counts: the file is cut back.
func (l *appendLog) commit(batch map[string][]byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(batch))
	for k := range batch {
		if len(k) > maxLogKey || len(batch[k]) > maxLogRecord-2-len(k) {
			return fmt.Errorf("%.64s: key or value too large", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys) // a deterministic file for the same batch
	var buf []byte
	offs := make([]int64, len(keys))
	for i, k := range keys {
		offs[i] = l.size + int64(len(buf))
		buf = appendRecord(buf, k, batch[k])
	}
	if _, err := l.f.WriteAt(buf, l.size); err != nil {
		_ = l.f.Truncate(l.size)
		return err
	}
	if err := fdatasync(l.f); err != nil {
		_ = l.f.Truncate(l.size)
		return err
	}
	for i, k := range keys {
		l.apply(k, offs[i], 2+len(k)+len(batch[k]), len(k))
	}
	l.size += int64(len(buf))
	if l.size > compactAbove && l.size > compactFactor*l.live && l.size >= l.retryAt {
		if err := l.compact(); err != nil {
			l.retryAt = l.size + compactAbove
			return fmt.Errorf("%w: %w", errCompacting, err)
		}
	}
	return nil
}

// get returns key's value, or nil.
func (l *appendLog) get(key string) ([]byte, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.read(key)
}

func (l *appendLog) read(key string) ([]byte, error) {
	ref, ok := l.keys[key]
	if !ok {
		return nil, nil
	}
	v := make([]byte, ref.n)
	if _, err := l.f.ReadAt(v, ref.off); err != nil {
		return nil, fmt.Errorf("read %s at %d: %w", l.path, ref.off, err)
	}
	return v, nil
}

// keysWithPrefix returns the keys starting with prefix, in order.
func (l *appendLog) keysWithPrefix(prefix string) []string {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.sortedKeys(prefix)
}

func (l *appendLog) sortedKeys(prefix string) []string {
	var out []string
	for k := range l.keys {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// compact rewrites the file with only the live records: into a new file
// beside it, synced, renamed over it, the directory synced. The old file
// is read once, front to back, and each record a key still points at is
// copied as it is. A failure leaves the old file in use.
func (l *appendLog) compact() error {
	tmp := l.path + ".compact"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	next := make(map[string]valueRef, len(l.keys))
	w := bufio.NewWriterSize(f, 256<<10)
	var out int64
	var head [logHeader]byte
	_, err = eachRecord(bufio.NewReaderSize(io.NewSectionReader(l.f, 0, l.size), 256<<10), l.size, func(off int64, rec []byte, keyLen int) error {
		key := rec[2 : 2+keyLen]
		ref, ok := l.keys[string(key)]
		if !ok || ref.off != off+logHeader+2+int64(keyLen) {
			return nil // deleted, or written again later
		}
		binary.LittleEndian.PutUint32(head[0:4], uint32(len(rec)))
		binary.LittleEndian.PutUint32(head[4:8], crc32.Checksum(rec, crcTable))
		if _, err := w.Write(head[:]); err != nil {
			return err
		}
		if _, err := w.Write(rec); err != nil {
			return err
		}
		next[string(key)] = valueRef{off: out + logHeader + 2 + int64(keyLen), n: ref.n}
		out += logHeader + int64(len(rec))
		return nil
	})
	if err == nil && len(next) != len(l.keys) {
		err = fmt.Errorf("%d of %d keys found in %s", len(next), len(l.keys), l.path)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = fdatasync(f)
	}
	if err == nil {
		err = os.Rename(tmp, l.path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(l.path))
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("compact: %w", err)
	}
	l.f.Close()
	l.f, l.keys, l.size, l.live = f, next, out, out
	return nil
}

func (l *appendLog) close() error { return l.f.Close() }

func fdatasync(f *os.File) error {
	if err := syscall.Fdatasync(int(f.Fd())); err != nil {
		return fmt.Errorf("fdatasync %s: %w", f.Name(), err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
