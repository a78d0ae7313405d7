// Package store keeps the broker's retained messages — edgefence's
// retained transitions, which are the engine's fence state, and clients'
// own retained messages — in a bbolt file in the data dir. Sessions,
// subscriptions and inflight messages are not kept (docs/persistence.md).
//
// Each write is appended as a record under a growing sequence number
// (record.go), the topic → newest record index is kept in memory, and
// superseded records are compacted away (compact.go); a record's message
// is mochi's storage.Message in JSON. A data dir in the layout of mochi's
// bbolt hook (bucket "mochi", key "RET_" + topic) is converted once
// (migrate_mochi.go).
package store

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"github.com/mochi-mqtt/server/v2/packets"
	"go.etcd.io/bbolt"
	bberrors "go.etcd.io/bbolt/errors"
)

// File is the store's file in the data dir.
const File = "edgefence.db"

// lockWait is how long Open waits for another process to let go of the
// file: two brokers on one store would corrupt it.
const lockWait = 2 * time.Second

// keyPrefix is what mochi's hook put before a topic in a key, and still
// starts the message's ID.
var keyPrefix = storage.RetainedKey + "_"

var (
	// ErrLocked is returned when another process has the store open.
	ErrLocked = errors.New("data dir in use by another process")
	// ErrDamaged is returned when bbolt's checks find the store damaged;
	// the error names the file and, where bbolt tells, the pages.
	ErrDamaged = errors.New("store damaged")
)

// Write is one retained message to store: Value is its encoding (Encode);
// nil deletes the topic's.
type Write struct {
	Topic string
	Value []byte
}

// Options configure Open.
type Options struct {
	Log     *slog.Logger
	Metrics *metrics.Set // edgefence_store_errors_total goes here
	// Own is the id of the inline client whose retained messages the
	// caller stores itself, in batches (Write): OnRetainMessage skips them.
	Own string
	// Withhold is a topic prefix whose retained messages
	// StoredRetainedMessages does not give mochi.
	Withhold string
}

// Store is the open store, and a mochi hook that keeps clients' retained
// messages in it and gives them back to mochi when it starts.
type Store struct {
	mqtt.HookBase
	db       *bbolt.DB
	path     string
	log      *slog.Logger
	errs     *metrics.Counter
	commits  *metrics.Counter // write transactions committed
	written  *metrics.Counter // retained messages they held
	own      string
	withhold string

	compacted *metrics.Counter // records compaction removed
	tuning    compaction       // compact's thresholds: the constants, but in tests
	// failCommit, in tests, fails a transaction after its writes and
	// compaction, as a full disk would.
	failCommit func() error

	mu      sync.Mutex        // one Write at a time; guards what follows
	pending map[string][]byte // topic → write for the next transaction: failed ones, expiries
	index   map[string]uint64 // topic → sequence of its newest record; absent: none retained
	records int               // records in the bucket: live, superseded, tombstones, unreadable
	seq     uint64            // the next record's sequence
	from    uint64            // compaction's next record; below it only unreadable ones are left
	key     []byte            // reused: bbolt copies keys
	buf     []byte            // the transaction's records, reused: bbolt keeps values until the commit
	undo    []undo            // the transaction's index changes, reverted if it fails
	gone    []byte            // compact's, reused: the keys it deletes
	moves   []move            // compact's, reused: the records it moves
	once    sync.Once
}

// undo is an index entry as it was before a transaction changed it.
type undo struct {
	topic string
	seq   uint64
	had   bool
}

// Open opens (creating) the store in dir. It refuses a store that bbolt's
// checks find damaged (ErrDamaged: run `edgefence store check` and
// `repair`) or that another process holds (ErrLocked, after 2 s). A data
// dir of the append-log versions is migrated once (migrate.go).
func Open(dir string, o Options) (*Store, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Metrics == nil {
		o.Metrics = metrics.NewSet()
	}
	path := filepath.Join(dir, File)
	legacy, err := readLegacy(dir)
	if err != nil {
		return nil, err
	}
	if err := preflight(dir, path); err != nil {
		return nil, err
	}
	db, err := openDB(path, false)
	if err != nil {
		return nil, err
	}
	s := &Store{
		db:        db,
		path:      path,
		log:       o.Log,
		errs:      o.Metrics.GetOrCreateCounter(`edgefence_store_errors_total`),
		commits:   o.Metrics.GetOrCreateCounter(`edgefence_store_commits_total`),
		written:   o.Metrics.GetOrCreateCounter(`edgefence_store_writes_total`),
		own:       o.Own,
		withhold:  o.Withhold,
		compacted: o.Metrics.GetOrCreateCounter(`edgefence_store_compacted_total`),
		tuning:    compaction{compactFactor, compactMin, compactBase},
	}
	if err := s.convert(); err != nil {
		db.Close()
		return nil, err
	}
	if err := s.load(); err != nil {
		db.Close()
		return nil, err
	}
	if legacy != nil {
		if err := s.migrate(dir, legacy); err != nil {
			db.Close()
			os.Remove(path) // created for the migration: the next start tries again
			return nil, err
		}
	}
	if err := s.upgrade(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// openDB opens the bbolt file at path. Not with NoFreelistSync: bbolt
// then rebuilds the free list on open in a goroutine of its own, where a
// damaged page panics the whole process instead of failing the open.
func openDB(path string, readOnly bool) (db *bbolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil { // bbolt trusts the pages it maps
			db, err = nil, fmt.Errorf("%w: %s: bbolt failed reading it: %v", ErrDamaged, path, r)
		}
	}()
	db, err = bbolt.Open(path, 0o600, &bbolt.Options{
		Timeout:      lockWait,
		FreelistType: bbolt.FreelistMapType,
		ReadOnly:     readOnly,
	})
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, bberrors.ErrTimeout):
		return nil, fmt.Errorf("%s: %w", filepath.Dir(path), ErrLocked)
	case errors.Is(err, bberrors.ErrInvalid), errors.Is(err, bberrors.ErrChecksum), errors.Is(err, bberrors.ErrVersionMismatch),
		strings.Contains(err.Error(), "file size too small"):
		return nil, fmt.Errorf("%w: %s: %w", ErrDamaged, path, err)
	default:
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
}

// preflight checks the file at path in dir, if there is one, before it is
// opened for writing, which reads pages bbolt takes on trust: ErrDamaged
// with what is wrong. Either meta page invalid is damage (see checkMeta).
func preflight(dir, path string) error {
	if st, err := os.Stat(path); err != nil || st.Size() == 0 {
		return nil // none yet (or unreadable: the open says why)
	}
	if problems := checkMeta(path); len(problems) > 0 {
		return fmt.Errorf("%w: %s: %s; the file was not changed. With the broker stopped, run `edgefence store repair --data-dir %s`: "+
			"it keeps the valid meta page's commit in a fresh file and this one aside; the last commit may be lost (docs/runbook.md)",
			ErrDamaged, path, strings.Join(problems, "; "), dir)
	}
	db, err := openDB(path, true)
	if err != nil {
		return err
	}
	defer db.Close()
	problems := inspect(db, path)
	if len(problems) == 0 {
		return nil
	}
	more := ""
	if len(problems) > 3 {
		more = fmt.Sprintf(" (and %d more)", len(problems)-3)
		problems = problems[:3]
	}
	ps := db.Info().PageSize
	return fmt.Errorf("%w: %s (pages of %d bytes: page N starts at byte N×%d): %s%s; the file was not changed: see `edgefence store check` and `edgefence store repair --data-dir %s`",
		ErrDamaged, path, ps, ps, strings.Join(problems, "; "), more, dir)
}

// inspect lists what is wrong with db, the file at path: a file shorter
// than its pages (which bbolt would read past the end of the mapping,
// a fault no recover catches), else what bbolt's Tx.Check reports.
func inspect(db *bbolt.DB, path string) (problems []string) {
	st, err := os.Stat(path)
	if err != nil {
		return []string{err.Error()}
	}
	defer func() {
		if r := recover(); r != nil {
			problems = append(problems, fmt.Sprint(r))
		}
	}()
	_ = db.View(func(tx *bbolt.Tx) error {
		if need := tx.Size(); need > st.Size() {
			problems = append(problems, fmt.Sprintf("the file is %d bytes and its pages run to byte %d: cut short", st.Size(), need))
			return nil
		}
		for err := range tx.Check() {
			problems = append(problems, err.Error())
		}
		return nil
	})
	return problems
}

// ID names the hook.
func (s *Store) ID() string { return "edgefence-store" }

// Provides says which hook events the store handles.
func (s *Store) Provides(b byte) bool {
	switch b {
	case mqtt.OnRetainMessage, mqtt.OnRetainedExpired, mqtt.StoredRetainedMessages:
		return true
	}
	return false
}

// OnRetainMessage stores a client's retained message (an empty one
// deletes) before mochi acknowledges it. Own's are skipped: the caller
// writes them in batches.
func (s *Store) OnRetainMessage(cl *mqtt.Client, pk packets.Packet, _ int64) {
	if cl != nil && cl.Net.Inline && cl.ID == s.own {
		return
	}
	_ = s.Write([]Write{{Topic: pk.TopicName, Value: Encode(cl, &pk)}}) // never the server's mark

}

// OnRetainedExpired deletes a retained message mochi has expired, with
// the next Write (or Close) rather than a commit of its own: an expired
// EXIT left on disk meanwhile is deleted again on restart (restore).
func (s *Store) OnRetainedExpired(topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[string][]byte{}
	}
	s.pending[topic] = nil
}

// StoredRetainedMessages returns the stored retained messages but those
// under Withhold; mochi retains them again when it starts.
func (s *Store) StoredRetainedMessages() ([]storage.Message, error) {
	var out []storage.Message
	err := s.scan("", func(m *storage.Message) {
		if s.withhold == "" || !strings.HasPrefix(m.TopicName, s.withhold) {
			out = append(out, *m)
		}
	})
	return out, err
}

// Retained calls fn with each readable stored message whose topic starts
// with prefix, in topic order.
func (s *Store) Retained(prefix string, fn func(m *storage.Message)) error {
	return s.scan(prefix, fn)
}

func (s *Store) scan(prefix string, fn func(m *storage.Message)) (err error) {
	type entry struct {
		topic string
		seq   uint64
	}
	var es []entry
	s.mu.Lock()
	for t, seq := range s.index {
		if strings.HasPrefix(t, prefix) {
			es = append(es, entry{t, seq})
		}
	}
	// The index and the snapshot agree: no Write runs between them.
	tx, err := s.db.Begin(false)
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("read %s: %w", s.path, err)
	}
	defer tx.Rollback()
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.topic, b.topic) })
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil { // a page bbolt cannot read, or one past the end of the file
			err = fmt.Errorf("%w: %s: %v", ErrDamaged, s.path, r)
		}
	}()
	b := tx.Bucket(recordsBucket)
	var key []byte
	for _, e := range es {
		key = seqKey(key[:0], e.seq)
		m, err := decodeRecord(b.Get(key))
		if err != nil {
			s.errs.Inc()
			s.log.Warn("store: skipping an unreadable retained message; it stays in the file (edgefence store check)", "file", s.path, "topic", e.topic[:min(len(e.topic), 128)], "record", e.seq, "error", err)
			continue
		}
		fn(m)
	}
	return nil
}

// view runs fn on the bucket in a read transaction; a page bbolt cannot
// read, or one past the end of the file, is ErrDamaged, not a crash.
func (s *Store) view(fn func(b *bbolt.Bucket) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: %v", ErrDamaged, s.path, r)
		}
	}()
	return s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket(recordsBucket)
		if b == nil {
			return nil
		}
		return fn(b)
	})
}

// decodeRecord is the message of record value v: a tombstone, or a
// message that does not decode or names another topic, is an error.
func decodeRecord(v []byte) (*storage.Message, error) {
	topic, msg, err := parseRecord(v)
	if err != nil {
		return nil, err
	}
	return decode(topic, msg)
}

// decode is message msg, which must be topic's.
func decode(topic, msg []byte) (*storage.Message, error) {
	if len(msg) == 0 {
		return nil, errors.New("a tombstone, not a message")
	}
	var m storage.Message
	if err := m.UnmarshalBinary(msg); err != nil {
		return nil, err
	}
	if m.TopicName != string(topic) {
		return nil, fmt.Errorf("stored for topic %.128q", m.TopicName)
	}
	return &m, nil
}

// Write stores ws, and what is pending, in one transaction: one commit,
// and so one pair of fdatasyncs, for a whole batch, its records appended
// at the end of the file; the same transaction compacts a share of the
// superseded records when they are many (compact). Writes of a
// transaction that failed are kept and tried again with the next (a newer
// write of a topic wins).
func (s *Store) Write(ws []Write) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 && len(ws) == 0 {
		return nil
	}
	seq, records, from := s.seq, s.records, s.from
	s.undo, s.buf = s.undo[:0], s.buf[:0]
	removed := 0
	err := s.db.Update(func(tx *bbolt.Tx) error {
		b := tx.Bucket(recordsBucket)
		if b == nil {
			return errors.New("no records bucket")
		}
		b.FillPercent = 1 // appended in key order: full pages, none to split
		for topic, v := range s.pending {
			if err := s.put(b, topic, v, seq); err != nil {
				return err
			}
		}
		for _, w := range ws {
			if err := s.put(b, w.Topic, w.Value, seq); err != nil {
				return err
			}
		}
		var err error
		if removed, err = s.compact(b, len(s.pending)+len(ws), seq); err == nil && s.failCommit != nil {
			err = s.failCommit()
		}
		return err
	})
	if err == nil {
		s.commits.Inc()
		s.written.Add(len(s.pending) + len(ws))
		s.compacted.Add(removed)
		clear(s.pending)
		return nil
	}
	for i := len(s.undo) - 1; i >= 0; i-- {
		if u := s.undo[i]; u.had {
			s.index[u.topic] = u.seq
		} else {
			delete(s.index, u.topic)
		}
	}
	s.seq, s.records, s.from = seq, records, from
	s.errs.Inc()
	s.log.Error("store: commit failed; these retained messages are not on disk until a later commit succeeds", "file", s.path, "messages", len(ws), "error", err)
	if s.pending == nil {
		s.pending = map[string][]byte{}
	}
	for _, w := range ws {
		s.pending[w.Topic] = w.Value
	}
	return fmt.Errorf("store %s: %w", s.path, err)
}

// put appends topic's record of value v (nil: a tombstone) to b and
// points the index at it. Deleting a topic that has no record writes
// nothing. A topic written before in this transaction (its record at or
// after first) has that record replaced: no one can see it, and it would
// only be compacted away.
func (s *Store) put(b *bbolt.Bucket, topic string, v []byte, first uint64) error {
	old, had := s.index[topic]
	if v == nil && !had {
		return nil
	}
	at := s.seq
	if had && old >= first {
		at = old
	}
	start := len(s.buf)
	s.buf = appendRecord(s.buf, topic, v)
	s.key = seqKey(s.key[:0], at)
	// Earlier records keep the old array if s.buf grew: bbolt holds them.
	if err := b.Put(s.key, s.buf[start:len(s.buf):len(s.buf)]); err != nil {
		return err
	}
	s.undo = append(s.undo, undo{topic, old, had})
	if v == nil {
		delete(s.index, topic)
	} else {
		s.index[topic] = at
	}
	if at == s.seq {
		s.seq++
		s.records++
	}
	return nil
}

// Encode is a retained publish from client cl (nil: mochi's) as mochi's
// bbolt hook stored it; an empty payload is nil, which deletes. It never
// bears the server's mark (EncodeServer), whatever cl and pk say.
func Encode(cl *mqtt.Client, pk *packets.Packet) []byte {
	id := ""
	if cl != nil {
		id = cl.ID
	}
	return encode(id, storage.RetainedKey, pk)
}

// EncodeServer is a retained publish of the server's own, id its
// publisher's client id, with the server's mark (IsServer). Only the
// server's publisher calls it: no client's publish reaches it.
func EncodeServer(id string, pk *packets.Packet) []byte {
	return encode(id, serverType, pk)
}

func encode(client, typ string, pk *packets.Packet) []byte {
	if len(pk.Payload) == 0 {
		return nil
	}
	m := storage.Message{
		ID:          keyPrefix + pk.TopicName,
		T:           typ,
		Client:      client,
		FixedHeader: pk.FixedHeader,
		TopicName:   pk.TopicName,
		Payload:     pk.Payload,
		Created:     pk.Created,
		Origin:      pk.Origin,
		Properties: storage.MessageProperties{
			PayloadFormat:          pk.Properties.PayloadFormat,
			MessageExpiryInterval:  pk.Properties.MessageExpiryInterval,
			ContentType:            pk.Properties.ContentType,
			ResponseTopic:          pk.Properties.ResponseTopic,
			CorrelationData:        pk.Properties.CorrelationData,
			SubscriptionIdentifier: pk.Properties.SubscriptionIdentifier,
			User:                   pk.Properties.User,
		},
	}
	return appendMessage(make([]byte, 0, 320+3*len(pk.TopicName)+len(client)+4*len(pk.Payload)/3), &m)
}

// Close writes what is pending and closes the file; later writes fail.
func (s *Store) Close() error {
	var err error
	s.once.Do(func() { err = errors.Join(s.Write(nil), s.db.Close()) })
	return err
}

// Stop closes the store when mochi stops.
func (s *Store) Stop() error { return s.Close() }

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
