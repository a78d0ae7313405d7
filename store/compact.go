package store

import "go.etcd.io/bbolt"

// Compaction removes superseded records and tombstones from the oldest
// end of the bucket, moving the live records it meets to the end, inside
// the transaction of a Write: its pages are the first few of the tree,
// freed whole, and it costs no commit of its own. It starts when the
// records that are not live outnumber the live ones compactFactor times
// (and compactMin), and each Write then takes on compactPerWrite times
// its own records plus compactBase: about as many dead records as it
// adds, so the file stays near (1 + compactFactor) times its live
// records. docs/persistence.md has the figures.
const (
	compactFactor   = 2
	compactMin      = 1024
	compactPerWrite = 2
	compactBase     = 256
)

// move is a live record compact appends anew.
type move struct {
	topic string
	value []byte
}

// compaction is when compact starts (factor, least) and the records it
// takes on beside its share of a Write's (base).
type compaction struct{ factor, least, base int }

// compact removes up to its share of the oldest records before seq (the
// first of this transaction) from b: superseded records and tombstones
// are deleted, live ones appended anew. A record that cannot be read is
// left where it is: its topic is unknown, and `store check` names it. It
// returns how many records it removed.
//
// A tombstone may go once the records before it are gone: those of its
// topic were all before it, and every one of them was superseded by it.
func (s *Store) compact(b *bbolt.Bucket, n int, seq uint64) (int, error) {
	live := len(s.index)
	if s.records-live < s.tuning.factor*live+s.tuning.least {
		return 0, nil
	}
	gone, moves := s.gone[:0], s.moves[:0] // keys, 8 bytes each
	defer func() { s.gone, s.moves = gone, moves[:0] }()
	budget := compactPerWrite*n + s.tuning.base
	c := b.Cursor()
	k, v := c.Seek(seqKey(nil, s.from))
	for ; k != nil && budget > 0; k, v = c.Next() {
		at, ok := parseKey(k)
		if ok && at >= seq {
			break
		}
		budget--
		if ok {
			s.from = at + 1
		}
		topic, msg, err := parseRecord(v)
		if !ok || err != nil {
			continue // unreadable: kept (and a key not of 8 bytes is not a record's)
		}
		if cur, live := s.index[string(topic)]; live && cur == at {
			start := len(s.buf) // a copy: the cursor's value is bbolt's page
			s.buf = append(s.buf, msg...)
			moves = append(moves, move{string(topic), s.buf[start:len(s.buf):len(s.buf)]})
		}
		gone = append(gone, k...)
	}
	for i := 0; i < len(gone); i += 8 {
		if err := b.Delete(gone[i : i+8]); err != nil {
			return 0, err
		}
	}
	s.records -= len(gone) / 8
	for _, m := range moves {
		if err := s.put(b, m.topic, m.value, seq); err != nil {
			return 0, err
		}
	}
	return len(gone)/8 - len(moves), nil
}
