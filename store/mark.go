package store

import (
	"bytes"
	"fmt"

	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"go.etcd.io/bbolt"
)

// The server's mark: the stored message's type field, which mochi's hook
// set to "RET" and which nothing of a client's publish reaches. Only
// EncodeServer writes it; a client's retained message, stored by
// OnRetainMessage, never has it, whatever client id it connected with.
// A client id is no mark: any client may connect with any id.
const serverType = "edgefence-server"

// IsServer reports whether m is a retained message the server stored as
// its own (EncodeServer), and not a client's.
func IsServer(m *storage.Message) bool { return m.T == serverType }

// The store's format, in a bucket of its own: 2 is a store whose server
// records bear the mark. Versions before it told them by the publisher's
// client id alone.
var (
	formatBucket = []byte("edgefence")
	formatKey    = []byte("format")
	format2      = []byte("2")
)

// upgrade marks, once, the records that earlier versions' publisher
// wrote (client and origin the Own id) as the server's: their only mark
// was that id. A record a client forged under an earlier version by
// connecting with that id is taken as the server's at this one upgrade;
// restore's plausibility check still refuses the nonsense ones. Without
// Own (a tool's open) nothing is changed.
func (s *Store) upgrade() error {
	if s.own == "" {
		return nil
	}
	done := false
	if err := s.db.View(func(tx *bbolt.Tx) error {
		fb := tx.Bucket(formatBucket)
		done = fb != nil && bytes.Equal(fb.Get(formatKey), format2)
		return nil
	}); err != nil || done {
		return err
	}
	n := 0
	err := s.db.Update(func(tx *bbolt.Tx) error {
		fb, err := tx.CreateBucketIfNotExists(formatBucket)
		if err != nil {
			return err
		}
		if b := tx.Bucket(recordsBucket); b != nil {
			var keys, values [][]byte
			for topic, seq := range s.index { // the live records alone
				k := seqKey(nil, seq)
				m, err := decodeRecord(b.Get(k))
				if err != nil || m.T != storage.RetainedKey || m.Client != s.own || m.Origin != s.own {
					continue // unreadable ones stay as they are (store check)
				}
				m.T = serverType
				data, err := m.MarshalBinary()
				if err != nil {
					return err
				}
				keys, values = append(keys, k), append(values, appendRecord(nil, topic, data))
			}
			for i, k := range keys { // in place: the record stays its topic's newest
				if err := b.Put(k, values[i]); err != nil {
					return err
				}
			}
			n = len(keys)
		}
		return fb.Put(formatKey, format2)
	})
	if err != nil {
		return fmt.Errorf("upgrade %s: %w", s.path, err)
	}
	if n > 0 {
		s.log.Info("store: marked the retained transitions an earlier version wrote as the server's own", "file", s.path, "records", n)
	}
	return nil
}
