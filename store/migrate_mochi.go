package store

import (
	"bytes"
	"fmt"

	"go.etcd.io/bbolt"
)

// The layout of mochi's bbolt storage hook, which the versions before the
// append layout kept (bucket "mochi", key "RET_" + topic, the message as
// its value), converted once on start; delete this file once no such
// data dir is left to open.
var mochiBucket = []byte("mochi")

// convert creates the records bucket if there is none and moves the
// retained messages of the mochi layout into it, in one transaction, in
// topic order after any records already there, deleting the mochi bucket
// with the records of that hook edgefence no longer keeps (sessions,
// subscriptions, inflight messages, $SYS info). A failure leaves the file
// as it was.
func (s *Store) convert() error {
	done := false
	if err := s.db.View(func(tx *bbolt.Tx) error {
		done = tx.Bucket(recordsBucket) != nil && tx.Bucket(mochiBucket) == nil
		return nil
	}); err != nil || done {
		return err
	}
	moved, stale := 0, 0
	err := s.db.Update(func(tx *bbolt.Tx) error {
		rb, err := tx.CreateBucketIfNotExists(recordsBucket)
		if err != nil {
			return err
		}
		old := tx.Bucket(mochiBucket)
		if old == nil {
			return nil
		}
		rb.FillPercent = 1
		seq := uint64(1)
		if k, _ := rb.Cursor().Last(); k != nil {
			if last, ok := parseKey(k); ok {
				seq = last + 1
			}
		}
		err = old.ForEach(func(k, v []byte) error {
			topic, ok := bytes.CutPrefix(k, []byte(keyPrefix))
			if !ok || len(v) == 0 {
				stale++
				return nil
			}
			moved++
			seq++
			return rb.Put(seqKey(nil, seq-1), appendRecord(make([]byte, 0, recordSize(string(topic), v)), string(topic), v))
		})
		if err != nil {
			return err
		}
		return tx.DeleteBucket(mochiBucket)
	})
	if err != nil {
		return fmt.Errorf("convert %s to the append layout: %w", s.path, err)
	}
	if moved+stale > 0 {
		s.log.Info("store: converted the retained messages of an earlier version to the append layout; the session, subscription and inflight records it also kept are dropped",
			"file", s.path, "messages", moved, "dropped", stale)
	}
	return nil
}
