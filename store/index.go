package store

import (
	"go.etcd.io/bbolt"
)

// load builds the index, topic → newest record, with one scan of the
// records in order: a later record of a topic supersedes an earlier one,
// a tombstone deletes it. Messages are not decoded here: one that does
// not decode is skipped when it is read, and `store check` names it. A
// record whose topic cannot be read is counted and logged.
func (s *Store) load() error {
	s.index, s.records, s.seq, s.from = map[string]uint64{}, 0, 1, 0
	unreadable := 0
	err := s.view(func(b *bbolt.Bucket) error {
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			s.records++
			seq, ok := parseKey(k)
			if ok { // an unreadable record's sequence is not to be reused either
				s.seq = max(s.seq, seq+1)
			}
			topic, msg, err := parseRecord(v)
			if !ok || err != nil {
				unreadable++
				continue
			}
			if len(msg) == 0 {
				delete(s.index, string(topic))
			} else {
				s.index[string(topic)] = seq
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if unreadable > 0 {
		s.errs.Add(unreadable)
		s.log.Warn("store: records whose topic cannot be read are skipped; they stay in the file (edgefence store check)", "file", s.path, "records", unreadable)
	}
	return nil
}
