package broker

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Keys and values are those of mochi's bbolt hook, which earlier
// edgefence versions used: their stores are migrated key for key
// (migrateBolt).
var (
	storeBucket = []byte("mochi")
	retainedPfx = storage.RetainedKey + "_"
)

// store is the data dir: the retained messages — edgefence's fence state,
// its retained transitions, and clients' own retained messages — in an
// append-only log (appendLog). Nothing else is kept: sessions, subscriptions and inflight
// messages live in memory, as in a broker without persistence, because
// mochi's bbolt hook wrote each of them (two transactions per QoS 1 ping)
// and capped the broker at ~3,000 pings/s (docs/performance.md).
//
// Writes are group-committed: they are queued in call order (the latest
// value of a topic wins) and one goroutine commits whatever is queued in
// one write and one fdatasync, so the disk sees one commit per batch, not
// per message. The transition publisher waits for its batch's commit before it
// publishes (wait), so a transition a subscriber has seen is on disk;
// other writers (clients' retained messages, expiries) do not wait.
type store struct {
	mqtt.HookBase
	file        *appendLog
	lock        *os.File // the data dir's
	log         *slog.Logger
	errs        *metrics.Counter
	transitions []byte // key prefix of the retained transitions, which mochi is not given

	mu        sync.Mutex
	cond      sync.Cond
	pending   map[string][]byte // key → value; nil deletes
	queued    uint64            // writes queued so far
	committed uint64            // writes committed (or failed) so far
	closed    bool

	kick chan struct{}
	done chan struct{}
	once sync.Once
}

// openStore opens (creating) the store in the data dir and starts its
// committer; prefix is the transition topics' (--transition-prefix). The
// store of an earlier version (bbolt) is migrated on first open.
func openStore(dir, prefix string, set *metrics.Set, log *slog.Logger) (*store, error) {
	lock, err := lockDataDir(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, logFile)
	_, statErr := os.Stat(path)
	file, cut, err := openAppendLog(path)
	if err != nil {
		lock.Close()
		return nil, err
	}
	if cut > 0 {
		log.Warn("store: cut a torn or corrupt tail off the log (a crash while writing a commit nobody was told had been stored)", "file", path, "bytes", cut)
	}
	if errors.Is(statErr, os.ErrNotExist) {
		if _, err := migrateBolt(dir, file, log); err != nil {
			file.close()
			os.Remove(path) // migrate again next time
			lock.Close()
			return nil, err
		}
	}
	s := &store{
		file:        file,
		lock:        lock,
		log:         log,
		errs:        set.NewCounter(`edgefence_store_errors_total`),
		transitions: []byte(retainedPfx + prefix + "/"),
		pending:     map[string][]byte{},
		kick:        make(chan struct{}, 1),
		done:        make(chan struct{}),
	}
	s.cond.L = &s.mu
	go s.commitLoop()
	return s, nil
}

// ID names the hook.
func (s *store) ID() string { return "edgefence-store" }

// Provides says which hook events the store handles.
func (s *store) Provides(b byte) bool {
	switch b {
	case mqtt.OnRetainMessage, mqtt.OnRetainedExpired, mqtt.StoredRetainedMessages:
		return true
	}
	return false
}

// OnRetainMessage queues a retained message (an empty one: its deletion,
// which mochi reports as r = -1). The transition publisher's own messages
// are queued, and waited for, before they are published (see
// publisher.send): skipped here.
func (s *store) OnRetainMessage(cl *mqtt.Client, pk packets.Packet, r int64) {
	if cl != nil && cl.Net.Inline && cl.ID == publisherID {
		return
	}
	s.retain(cl, &pk)
}

// retain queues a retained publish from cl, or with an empty payload the
// deletion of its topic's retained message, and returns the write's
// sequence number, for wait.
func (s *store) retain(cl *mqtt.Client, pk *packets.Packet) uint64 {
	if len(pk.Payload) == 0 {
		return s.queue(retainedPfx+pk.TopicName, nil)
	}
	return s.queue(retainedPfx+pk.TopicName, encodeRetained(cl, pk))
}

// OnRetainedExpired queues the deletion of an expired retained message.
func (s *store) OnRetainedExpired(topic string) {
	s.queue(retainedPfx+topic, nil)
}

// StoredRetainedMessages returns the stored retained messages but the
// transitions (see retainedTransitions); mochi retains them again when it
// starts.
func (s *store) StoredRetainedMessages() ([]storage.Message, error) {
	var out []storage.Message
	err := s.scan(retainedPfx, string(s.transitions), func(_ string, m *storage.Message) { out = append(out, *m) })
	return out, err
}

// retainedTransitions calls fn with each stored message on a transition
// topic: the retained set's, which restore loads without going through
// mochi's retained map.
func (s *store) retainedTransitions(fn func(m *storage.Message)) error {
	return s.scan(string(s.transitions), "", func(_ string, m *storage.Message) { fn(m) })
}

// scan calls fn with each readable message whose key starts with prefix
// and not with skip (if not empty), in key order.
func (s *store) scan(prefix, skip string, fn func(k string, m *storage.Message)) error {
	for _, k := range s.file.keysWithPrefix(prefix) {
		if skip != "" && strings.HasPrefix(k, skip) {
			continue
		}
		v, err := s.file.get(k)
		if err != nil {
			return err
		}
		var m storage.Message
		if err := m.UnmarshalBinary(v); err != nil {
			s.log.Warn("store: skipping an unreadable retained message", "key", k, "error", err)
			continue
		}
		fn(k, &m)
	}
	return nil
}

// encodeRetained is a retained publish as mochi's bbolt hook stored it.
func encodeRetained(cl *mqtt.Client, pk *packets.Packet) []byte {
	m := storage.Message{
		ID:          retainedPfx + pk.TopicName,
		T:           storage.RetainedKey,
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
	if cl != nil {
		m.Client = cl.ID
	}
	data, _ := m.MarshalBinary() // JSON of plain fields: cannot fail
	return data
}

// queue records a write and returns its sequence number, for wait. A
// key or value the log cannot hold (a topic of more than 65,531 bytes) is
// not stored, counted and logged, rather than failing every commit after
// it.
func (s *store) queue(key string, value []byte) uint64 {
	if len(key) > maxLogKey || len(value) > maxLogRecord-2-len(key) {
		s.errs.Inc()
		s.log.Error("store: retained message too large for the store, not stored", "key", key[:min(len(key), 64)], "key_bytes", len(key), "value_bytes", len(value))
		return 0
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.errs.Inc()
		s.log.Error("store: write after close, not stored", "key", key)
		return 0
	}
	s.pending[key] = value
	s.queued++
	n := s.queued
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return n
}

// wait returns once write n (from queue) is committed, or its commit
// failed; n = 0 returns at once.
func (s *store) wait(n uint64) {
	s.mu.Lock()
	for s.committed < n && !s.closed {
		s.cond.Wait()
	}
	s.mu.Unlock()
}

// commitLoop commits whatever is queued, one transaction at a time, until
// close; while a commit is on its way to the disk the next batch gathers.
func (s *store) commitLoop() {
	defer close(s.done)
	for range s.kick {
		s.mu.Lock()
		batch, upto, closing := s.pending, s.queued, s.closed
		if len(batch) > 0 {
			s.pending = map[string][]byte{}
		}
		s.mu.Unlock()
		if len(batch) > 0 {
			if err := s.commit(batch); errors.Is(err, errCompacting) {
				s.errs.Inc()
				s.log.Error("store: committed, but rewriting the log without its dead records failed; it keeps growing until a rewrite succeeds", "error", err)
			} else if err != nil {
				s.errs.Inc()
				s.log.Error("store: commit failed; the retained state of these topics is not on disk until a later write succeeds", "messages", len(batch), "error", err)
				s.requeue(batch)
			}
		}
		s.mu.Lock()
		s.committed = max(s.committed, upto)
		s.cond.Broadcast()
		s.mu.Unlock()
		if closing {
			return
		}
	}
}

func (s *store) commit(batch map[string][]byte) error {
	return s.file.commit(batch)
}

// requeue puts a failed batch back, under any newer write of the same
// keys, to be retried with the next one.
func (s *store) requeue(batch map[string][]byte) {
	s.mu.Lock()
	for k, v := range batch {
		if _, newer := s.pending[k]; !newer {
			s.pending[k] = v
		}
	}
	s.mu.Unlock()
}

// close commits what is queued and closes the file. Later writes are
// counted as errors and dropped.
func (s *store) close() error {
	var err error
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		select {
		case s.kick <- struct{}{}:
		default: // a commit is pending anyway and will see closed
		}
		<-s.done
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
		err = errors.Join(s.file.close(), s.lock.Close())
	})
	return err
}

// Stop closes the store when mochi stops.
func (s *store) Stop() error { return s.close() }
