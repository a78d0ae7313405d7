package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The append-only log that edgefence versions before the bbolt store kept
// in the data dir, migrated once on start; delete this file once no such
// data dir is left to open.
const (
	legacyLog      = "retained.log"
	legacyMigrated = legacyLog + ".migrated"
	legacyLock     = "LOCK" // that version's lock file, removed with it
)

// legacy is an append log's content, to migrate.
type legacy struct {
	live map[string][]byte // key → value
	torn int64             // bytes of a torn last record left out
}

// readLegacy reads dir's append log if there is one to migrate: there is
// when the bbolt file does not exist yet. Both at once is refused: which
// one is current cannot be told.
func readLegacy(dir string) (*legacy, error) {
	path := filepath.Join(dir, legacyLog)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("data dir %s: %w", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, File)); err == nil {
		return nil, fmt.Errorf("data dir %s holds both %s (this version's store) and %s (an earlier version's): move the one not in use out of it", dir, File, legacyLog)
	}
	live, torn, err := readLegacyLog(path)
	if err != nil {
		return nil, err
	}
	return &legacy{live: live, torn: torn}, nil
}

// migrate copies the live records of dir's append log into the store in
// one transaction and renames the log out of the way.
func (s *Store) migrate(dir string, l *legacy) error {
	path := filepath.Join(dir, legacyLog)
	ws := make([]Write, 0, len(l.live))
	for k, v := range l.live {
		if topic, ok := strings.CutPrefix(k, keyPrefix); ok {
			ws = append(ws, Write{Topic: topic, Value: v})
		}
	}
	if err := s.Write(ws); err != nil {
		return fmt.Errorf("migrate %s: %w", path, err)
	}
	if err := os.Rename(path, filepath.Join(dir, legacyMigrated)); err != nil {
		return fmt.Errorf("migrate %s: %w", path, err)
	}
	_ = os.Remove(filepath.Join(dir, legacyLock))
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("migrate %s: %w", path, err)
	}
	s.log.Info("store: migrated the retained messages of an earlier version's append log",
		"from", path, "to", s.path, "messages", len(ws), "torn_tail_bytes", l.torn, "old_file", legacyMigrated)
	return nil
}

// readLegacyLog returns the live records of the log at path (key → value),
// and how many bytes of a torn last record (a crash in the middle of a
// commit nobody was told had been stored) it left out; damage anywhere
// else is ErrDamaged, naming the offset. A record is
//
//	length uint32 (of what follows the checksum)
//	crc32c uint32 (of what follows it)
//	key length uint16, key, value (empty: the key is deleted)
//
// little endian.
func readLegacyLog(path string) (map[string][]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := st.Size()
	crcTable := crc32.MakeTable(crc32.Castagnoli)
	live := map[string][]byte{}
	r := bufio.NewReaderSize(f, 256<<10)
	var head [8]byte
	var off int64
	damaged := func(why string) error {
		return fmt.Errorf("%w: %s at offset %d: %s; nothing was migrated, the file is unchanged", ErrDamaged, path, off, why)
	}
	for off < size {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return live, size - off, nil // a header cut short: torn
		}
		n := int64(binary.LittleEndian.Uint32(head[0:4]))
		end := off + 8 + n
		if end > size {
			return live, size - off, nil // runs past the end: torn
		}
		rec := make([]byte, n)
		if _, err := io.ReadFull(r, rec); err != nil {
			return nil, 0, fmt.Errorf("read %s at offset %d: %w", path, off, err)
		}
		if n < 2 || crc32.Checksum(rec, crcTable) != binary.LittleEndian.Uint32(head[4:8]) {
			if end == size {
				return live, size - off, nil // the last record, half written: torn
			}
			return nil, 0, damaged("a record fails its checksum and records follow it")
		}
		k := int(binary.LittleEndian.Uint16(rec[0:2]))
		if 2+k > len(rec) {
			return nil, 0, damaged("a record's key runs past it")
		}
		key := string(rec[2 : 2+k])
		if v := rec[2+k:]; len(v) > 0 {
			live[key] = v
		} else {
			delete(live, key)
		}
		off = end
	}
	return live, 0, nil
}
