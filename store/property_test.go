package store

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"go.etcd.io/bbolt"
	"pgregory.net/rapid"
)

// Any sequence of writes, deletes, expiries, failed commits, compactions
// and reopens reads back, per topic, the last value written, as a map
// does (a failed commit's writes are tried again with the next); the
// in-memory index and record count agree with the file.
func TestStoreIsAMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		dir := t.TempDir()
		tuning := compaction{
			factor: rapid.IntRange(0, 2).Draw(rt, "factor"),
			least:  rapid.IntRange(0, 8).Draw(rt, "least"),
			base:   rapid.IntRange(0, 6).Draw(rt, "base"),
		}
		reopen := func() *Store {
			s := open(t, dir)
			s.tuning = tuning
			return s
		}
		s := reopen()
		defer func() { s.Close() }()
		model := map[string]string{}
		pending := map[string]*string{} // expiries and failed writes: applied by the next commit (nil deletes)
		commit := func() {
			for topic, v := range pending {
				if v == nil {
					delete(model, topic)
				} else {
					model[topic] = *v
				}
			}
			clear(pending)
		}
		topic := rapid.SampledFrom([]string{"geofence/f/a", "geofence/f/b", "geofence/g/a", "devices/x/config", "a", ""})
		for i := range rapid.IntRange(1, 60).Draw(rt, "ops") {
			switch op := rapid.IntRange(0, 9).Draw(rt, fmt.Sprintf("op%d", i)); {
			case op < 6:
				var ws []Write
				for j := range rapid.IntRange(0, 5).Draw(rt, "batch") {
					tp := topic.Draw(rt, "topic")
					if rapid.IntRange(0, 3).Draw(rt, "delete") == 0 {
						ws = append(ws, Write{Topic: tp})
						continue
					}
					ws = append(ws, msg(tp, fmt.Sprintf("v%d.%d", i, j)))
				}
				fail := rapid.IntRange(0, 4).Draw(rt, "fail") == 0 && len(ws)+len(pending) > 0
				s.failCommit = nil
				if fail {
					s.failCommit = func() error { return errors.New("disk full") }
				}
				if err := s.Write(ws); (err != nil) != fail {
					rt.Fatalf("write: %v, want a failure: %v", err, fail)
				}
				s.failCommit = nil
				if !fail {
					commit()
				}
				for _, w := range ws {
					switch {
					case fail:
						v := string(w.Value)
						pending[w.Topic] = &v
						if w.Value == nil {
							pending[w.Topic] = nil
						}
					case w.Value == nil:
						delete(model, w.Topic)
					default:
						model[w.Topic] = string(w.Value)
					}
				}
			case op < 8:
				tp := topic.Draw(rt, "expired")
				s.OnRetainedExpired(tp)
				pending[tp] = nil
			default:
				if err := s.Close(); err != nil {
					rt.Fatal(err)
				}
				commit()
				s = reopen()
			}
			got := map[string]string{}
			s.mu.Lock()
			for tp, seq := range s.index {
				got[tp] = fmt.Sprint(seq)
			}
			s.mu.Unlock()
			values := storedValues(rt, s)
			if !maps.Equal(values, model) {
				rt.Fatalf("after op %d: stored %v, want %v", i, keys(values), keys(model))
			}
			checkCounts(rt, s)
		}
	})
}

// storedValues is what Retained gives: topic → encoded message.
func storedValues(t rapid.TB, s *Store) map[string]string {
	out := map[string]string{}
	var last string
	err := s.Retained("", func(m *storage.Message) {
		if m.TopicName < last {
			t.Fatalf("Retained gave %q after %q: not in topic order", m.TopicName, last)
		}
		last = m.TopicName
		v, err := m.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		out[m.TopicName] = string(v)
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkCounts holds the store's record count and index to the file's.
func checkCounts(t rapid.TB, s *Store) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	newest := map[string]uint64{}
	_ = s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(recordsBucket).ForEach(func(k, v []byte) error {
			n++
			seq, _ := parseKey(k)
			topic, msg, err := parseRecord(v)
			if err != nil {
				t.Fatalf("record %d: %v", seq, err)
			}
			if len(msg) == 0 {
				delete(newest, string(topic))
			} else {
				newest[string(topic)] = seq
			}
			return nil
		})
	})
	if n != s.records || !maps.Equal(newest, s.index) {
		t.Fatalf("the store counts %d records, the file holds %d; index %v, file %v", s.records, n, s.index, newest)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A record's header parses back to what was appended, and no input
// makes parseRecord fail other than with an error.
func FuzzParseRecord(f *testing.F) {
	f.Add(appendRecord(nil, "geofence/f/a", []byte(`{"topic_name":"geofence/f/a"}`)))
	f.Add(appendRecord(nil, "a", nil))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, v []byte) {
		topic, msg, err := parseRecord(v)
		if err != nil {
			return
		}
		if again := appendRecord(nil, string(topic), msg); len(again) > len(v) || !bytes.HasSuffix(v, again[len(again)-len(topic)-len(msg):]) {
			t.Fatalf("parsed %q, %q from %x", topic, msg, v)
		}
		if _, err := decodeRecord(v); err == nil && len(msg) == 0 {
			t.Fatal("a tombstone decoded as a message")
		}
	})
}

// A record whose topic cannot be read (its header damaged) is counted on
// open and kept where it is: later writes do not reuse its sequence,
// compaction passes it by, and `store check` names it.
func TestUnreadableRecordIsKept(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Write([]Write{msg("a", "1"), msg("b", "2")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := bbolt.Open(filepath.Join(dir, File), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error { // record 3, the last, damaged
		return tx.Bucket(recordsBucket).Put(seqKey(nil, 3), []byte{0xff, 0xff, 0xff})
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	s, err = Open(dir, Options{Log: quiet, Metrics: set})
	if err != nil {
		t.Fatal(err)
	}
	s.tuning = compaction{factor: 0, least: 0, base: 100} // compact everything it can
	for i := range 3 {
		if err := s.Write([]Write{msg("a", fmt.Sprint(i)), msg("c", "3")}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if n := set.GetOrCreateCounter(`edgefence_store_errors_total`).Get(); n != 1 {
		t.Errorf("%d errors counted on open, want 1", n)
	}
	r, err := Check(dir, nil)
	if err != nil || len(r.Bad) != 1 || r.Bad[0] != "record 3" || r.Records != 3 {
		t.Fatalf("check: %+v, %v; want record 3 unreadable and a, b, c", r, err)
	}
}
