package broker

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"go.etcd.io/bbolt"
)

// The data dir's files.
const (
	logFile    = "retained.log"         // the store (appendLog)
	lockFile   = "LOCK"                 // held while a broker uses the dir
	boltFile   = "edgefence.db"         // the store of earlier versions
	boltMoved  = boltFile + ".migrated" // what it is renamed to once copied
	lockWaitAt = 2 * time.Second
)

// errDataDirLocked is returned when another process uses the data dir.
var errDataDirLocked = errors.New("data dir in use by another process")

// lockDataDir takes the data dir's lock, waiting up to two seconds for a
// process that holds it: two brokers on one store would corrupt it. The
// lock is a file of its own, never replaced (the log is, when compacted).
func lockDataDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockWaitAt)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%s: %w", dir, errDataDirLocked)
			}
			return nil, fmt.Errorf("lock %s: %w", dir, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// migrateBolt copies the retained messages of an earlier version's bbolt
// store into l, which must be new, and renames the bbolt file out of the
// way. Its other records (sessions, subscriptions, inflight messages of
// mochi's bbolt hook) are dropped, as that version did. It returns how
// many messages it copied; no bbolt file, 0.
func migrateBolt(dir string, l *appendLog, log *slog.Logger) (int, error) {
	path := filepath.Join(dir, boltFile)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: lockWaitAt, ReadOnly: true})
	if err != nil {
		return 0, fmt.Errorf("open %s to migrate it: %w", path, err)
	}
	batch := map[string][]byte{}
	stale := 0
	err = db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(storeBucket)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if bytes.HasPrefix(k, []byte(retainedPfx)) {
				batch[string(k)] = bytes.Clone(v)
			} else {
				stale++
			}
			return nil
		})
	})
	db.Close()
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", path, err)
	}
	if len(batch) > 0 {
		if err := l.commit(batch); err != nil {
			return 0, fmt.Errorf("migrate %s: %w", path, err)
		}
	}
	if err := os.Rename(path, filepath.Join(dir, boltMoved)); err != nil {
		return 0, fmt.Errorf("migrate %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return 0, fmt.Errorf("migrate %s: %w", path, err)
	}
	log.Info("store: migrated the retained messages of an earlier version's store; its sessions, subscriptions and inflight messages are not kept",
		"from", path, "to", filepath.Join(dir, logFile), "messages", len(batch), "dropped_records", stale, "old_file", boltMoved)
	return len(batch), nil
}
