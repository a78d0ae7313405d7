package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"github.com/mochi-mqtt/server/v2/packets"
	"go.etcd.io/bbolt"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func open(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{Log: quiet, Withhold: "geofence/"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func msg(topic, payload string) Write {
	pk := packets.Packet{TopicName: topic, Payload: []byte(payload), FixedHeader: packets.FixedHeader{Type: packets.Publish, Retain: true}}
	return Write{Topic: topic, Value: Encode(nil, &pk)}
}

// stored is what s holds: topic → payload.
func stored(t *testing.T, s *Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := s.Retained("", func(m *storage.Message) { out[m.TopicName] = string(m.Payload) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// Writes from many goroutines all land, each topic's latest wins, an empty
// value deletes, and the reopened file has them.
func TestWritesLatestWinsAndSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				if err := s.Write([]Write{msg(fmt.Sprintf("geofence/f/dev-%d-%d", g, i%20), fmt.Sprintf("v%d", i))}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := s.Write([]Write{{Topic: "geofence/f/dev-0-0"}}); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store) {
		t.Helper()
		got := stored(t, s)
		if len(got) != 8*20-1 {
			t.Fatalf("%d topics stored, want %d", len(got), 8*20-1)
		}
		if _, ok := got["geofence/f/dev-0-0"]; ok {
			t.Fatal("a deleted topic is still stored")
		}
		if v := got["geofence/f/dev-3-7"]; v != "v187" {
			t.Fatalf("geofence/f/dev-3-7 = %q, want the latest write v187", v)
		}
	}
	check(s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	again := open(t, dir)
	defer again.Close()
	check(again)
}

// A retained message on any legal topic is stored, one longer than
// bbolt's largest key too: the topic is in the record, not its key (the
// layout before the append one left it out, counted as an error).
func TestLongTopicIsStored(t *testing.T) {
	set := metrics.NewSet()
	dir := t.TempDir()
	s, err := Open(dir, Options{Log: quiet, Metrics: set})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 65534) // a legal MQTT topic
	if err := s.Write([]Write{msg("a/1", "1"), msg(long, "2"), msg("a/3", "3")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = open(t, dir)
	defer s.Close()
	got := stored(t, s)
	if n := set.GetOrCreateCounter(`edgefence_store_errors_total`).Get(); len(got) != 3 || got["a/1"] != "1" || got[long] != "2" || got["a/3"] != "3" || n != 0 {
		t.Fatalf("stored %d topics (a/1 %q, a/3 %q, the long one %q), %d errors; want all three, no error", len(got), got["a/1"], got["a/3"], got[long], n)
	}
}

// mochi is given the stored retained messages but those under Withhold
// (the transitions, which restore reads with Retained).
func TestStoredRetainedMessagesWithholds(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	if err := s.Write([]Write{msg("geofence/f/d", "x"), msg("geofence-other/x", "x"), msg("devices/d/config", "x")}); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.StoredRetainedMessages()
	if err != nil {
		t.Fatal(err)
	}
	var topics []string
	for _, m := range msgs {
		topics = append(topics, m.TopicName)
	}
	if strings.Join(topics, " ") != "devices/d/config geofence-other/x" {
		t.Errorf("mochi is given %v, want all but geofence/f/d", topics)
	}
}

// A second process (or a second open) on the same data dir fails within
// seconds with ErrLocked naming the dir.
func TestSecondOpenIsRefused(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	defer s.Close()
	_, err := Open(dir, Options{Log: quiet})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("second open: %v, want ErrLocked naming %s", err, dir)
	}
}

// fill writes n messages in several transactions (so that pages split and
// spread) and returns topic → encoded value.
func fill(t *testing.T, dir string, n int) map[string][]byte {
	t.Helper()
	s := open(t, dir)
	want := map[string][]byte{}
	for batch := range 20 {
		var ws []Write
		for i := batch; i < n; i += 20 {
			w := msg(fmt.Sprintf("geofence/f%02d/dev-%05d", i%13, i), fmt.Sprintf(`{"type":"ENTER","device":"dev-%05d","pad":"%0150d"}`, i, i))
			ws = append(ws, w)
			want[w.Topic] = w.Value
		}
		if err := s.Write(ws); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

// damage changes the store file with fn and returns its new content.
func damage(t *testing.T, dir string, fn func(b []byte) []byte) []byte {
	t.Helper()
	path := filepath.Join(dir, File)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = fn(b)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// keptAside checks that repair moved the damaged file aside unchanged and
// that the repaired store holds only records as they were written.
func keptAside(t *testing.T, r *Report, damaged []byte, want map[string][]byte, dir string) map[string]string {
	t.Helper()
	if kept, err := os.ReadFile(r.Aside); err != nil || !bytes.Equal(kept, damaged) {
		t.Fatalf("the damaged file was not kept as it was at %q (%v)", r.Aside, err)
	}
	s := open(t, dir)
	defer s.Close()
	got := map[string]string{}
	err := s.Retained("", func(m *storage.Message) {
		got[m.TopicName] = string(m.Payload)
		if v := Encode(nil, &packets.Packet{TopicName: m.TopicName, Payload: m.Payload, FixedHeader: m.FixedHeader}); !bytes.Equal(v, want[m.TopicName]) {
			t.Errorf("repaired %s is not what was written", m.TopicName)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A flipped bit in the header of a leaf page in the middle of the file
// (bbolt's structure): the broker refuses to start, naming the file and
// the page; check reports it; repair copies every record but the damaged
// page's — those before and after it — and keeps the damaged file.
func TestDamagedPageInTheMiddle(t *testing.T) {
	dir := t.TempDir()
	want := fill(t, dir, 3000)
	path := filepath.Join(dir, File)

	// The middle one of the leaf pages in use, and its record count.
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var leaves []int
	counts := map[int]int{}
	ps := db.Info().PageSize
	_ = db.View(func(tx *bbolt.Tx) error {
		for id := 2; int64(id*ps) < tx.Size(); id++ {
			p, err := tx.Page(id)
			if err != nil || p == nil {
				t.Fatalf("page %d: %v", id, err)
			}
			if p.Type == "leaf" {
				leaves = append(leaves, id)
				counts[id] = p.Count
			}
			id += p.OverflowCount
		}
		return nil
	})
	db.Close()
	if len(leaves) < 10 {
		t.Fatalf("%d leaf pages: too few to damage one in the middle", len(leaves))
	}
	page := leaves[len(leaves)/2]
	damaged := damage(t, dir, func(b []byte) []byte {
		b[page*ps+8] ^= 0x02 // the page's flags: a leaf becomes no known type
		return b
	})

	_, err = Open(dir, Options{Log: quiet})
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), fmt.Sprint(page)) {
		t.Fatalf("open: %v, want ErrDamaged naming %s and page %d", err, path, page)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, damaged) {
		t.Fatal("the refused open changed the file")
	}
	r, err := Check(dir, nil)
	if err != nil || !r.Damaged() {
		t.Fatalf("check: %+v, %v; want the damage reported", r, err)
	}
	r, err = Repair(dir, nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	got := keptAside(t, r, damaged, want, dir)
	if len(got) != len(want)-counts[page] {
		t.Fatalf("repaired %d records, want all %d but the %d on the damaged page (%v)", len(got), len(want), counts[page], r.Problems)
	}
}

// A flipped bit inside a stored value: bbolt's checks see nothing (its
// pages carry no checksum of their data), so the broker starts; the record
// is skipped, counted and logged, never deleted; check names it; repair
// copies the others and keeps the damaged file.
func TestFlippedBitInAValue(t *testing.T) {
	dir := t.TempDir()
	want := fill(t, dir, 500)
	victim := "geofence/f05/dev-00252"
	damaged := damage(t, dir, func(b []byte) []byte {
		// Every copy: bbolt leaves older ones on free pages.
		field := []byte(`"topic_name":"` + victim + `"`)
		if !bytes.Contains(b, field) {
			t.Fatal("the value is not in the file")
		}
		for i := bytes.Index(b, field); i >= 0; i = bytes.Index(b, field) {
			b[i+len(field)-2] ^= 0x01 // dev-00252 → dev-00253
		}
		return b
	})
	set := metrics.NewSet()
	s, err := Open(dir, Options{Log: quiet, Metrics: set})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	n := 0
	if err := s.Retained("", func(*storage.Message) { n++ }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if n != len(want)-1 || set.GetOrCreateCounter(`edgefence_store_errors_total`).Get() != 1 {
		t.Fatalf("read %d of %d records, %d errors; want all but the damaged one, counted", n, len(want), set.GetOrCreateCounter(`edgefence_store_errors_total`).Get())
	}
	r, err := Check(dir, nil)
	if err != nil || len(r.Bad) != 1 || r.Bad[0] != "RET_"+victim || r.Records != len(want)-1 {
		t.Fatalf("check: %+v, %v; want one bad record", r, err)
	}
	r, err = Repair(dir, nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if got := keptAside(t, r, damaged, want, dir); len(got) != len(want)-1 {
		t.Fatalf("repaired %d records, want %d", len(got), len(want)-1)
	}
}

// 100 bytes of garbage before the file: bbolt cannot find its meta pages.
// The broker refuses to start, naming the file; repair can read nothing
// and leaves the file as it is.
func TestGarbagePrefix(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 300)
	path := filepath.Join(dir, File)
	damaged := damage(t, dir, func(b []byte) []byte { return append(bytes.Repeat([]byte{0xa5}, 100), b...) })
	if _, err := Open(dir, Options{Log: quiet}); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), path) {
		t.Fatalf("open: %v, want ErrDamaged naming %s", err, path)
	}
	if _, err := Repair(dir, nil, quiet); !errors.Is(err, ErrDamaged) {
		t.Fatalf("repair: %v, want ErrDamaged", err)
	}
	if b, _ := os.ReadFile(path); !bytes.Equal(b, damaged) {
		t.Fatal("the file was changed")
	}
}

// A file cut in the middle (a copy or a disk that lost its tail; bbolt's
// own commits cannot tear it): the broker refuses to start, saying it is
// cut short; repair copies what can still be read, each record as
// written — often nothing, as bbolt writes the root of its tree last, at
// the end — says so, and keeps the cut file.
func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	want := fill(t, dir, 3000)
	path := filepath.Join(dir, File)
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var used int64
	_ = db.View(func(tx *bbolt.Tx) error { used = tx.Size(); return nil })
	db.Close()
	damaged := damage(t, dir, func(b []byte) []byte { return b[:used*2/3] })
	if _, err := Open(dir, Options{Log: quiet}); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "cut short") || !strings.Contains(err.Error(), path) {
		t.Fatalf("open: %v, want ErrDamaged: %s cut short", err, path)
	}
	r, err := Repair(dir, nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	got := keptAside(t, r, damaged, want, dir)
	if len(got) != r.Records || len(got) == len(want) || len(r.Problems) == 0 || len(r.Stopped) == 0 {
		t.Fatalf("repaired %d records (report: %d), problems %v, stopped %v: want the cut and the records not read reported", len(got), r.Records, r.Problems, r.Stopped)
	}
}

// logRecord is a record of the earlier versions' append log.
func logRecord(buf []byte, key string, value []byte) []byte {
	start := len(buf)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(2+len(key)+len(value)))
	buf = binary.LittleEndian.AppendUint32(buf, 0)
	buf = binary.LittleEndian.AppendUint16(buf, uint16(len(key)))
	buf = append(buf, key...)
	buf = append(buf, value...)
	binary.LittleEndian.PutUint32(buf[start+4:], crc32.Checksum(buf[start+8:], crc32.MakeTable(crc32.Castagnoli)))
	return buf
}

// A data dir of the append-log versions is migrated on first start: its
// live records, a deletion applied, a torn last record dropped; the log is
// renamed. One damaged in the middle is refused, naming the offset, and
// left as it is, with no bbolt file beside it.
func TestAppendLogIsMigratedOnce(t *testing.T) {
	dir := t.TempDir()
	a, b := msg("geofence/f/a", "A"), msg("geofence/f/b", "B")
	var log []byte
	log = logRecord(log, "RET_"+a.Topic, a.Value)
	log = logRecord(log, "RET_"+b.Topic, b.Value)
	log = logRecord(log, "RET_"+b.Topic, nil)
	torn := logRecord(nil, "RET_geofence/f/c", msg("geofence/f/c", "C").Value)
	log = append(log, torn[:len(torn)-5]...)
	if err := os.WriteFile(filepath.Join(dir, legacyLog), log, 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir)
	if got := stored(t, s); len(got) != 1 || got[a.Topic] != "A" {
		t.Fatalf("migrated %v, want only %s", got, a.Topic)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, legacyMigrated)); err != nil {
		t.Fatalf("the log was not renamed: %v", err)
	}

	dir = t.TempDir()
	bad := logRecord(logRecord(nil, "RET_"+a.Topic, a.Value), "RET_"+b.Topic, b.Value)
	bad[20] ^= 0x40 // inside the first record, with the second after it
	if err := os.WriteFile(filepath.Join(dir, legacyLog), bad, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir, Options{Log: quiet})
	if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "offset 0") {
		t.Fatalf("open: %v, want ErrDamaged at offset 0", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, legacyLog)); !bytes.Equal(got, bad) {
		t.Fatal("the damaged log was changed")
	}
	if _, err := os.Stat(filepath.Join(dir, File)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a bbolt file was left beside the refused log (%v)", err)
	}
}

// A topic's newest record on a damaged page, its older one still in the
// file (no compaction has removed it yet): repair restores the older
// one, so the device is back in its state before that transition, which
// its next ping corrects (docs/persistence.md, "Damage").
func TestRepairRestoresAnOlderRecordOfADamagedOne(t *testing.T) {
	dir := t.TempDir()
	fill(t, dir, 600) // pages before and after the topic's two records
	const topic = "geofence/depot/truck-9"
	s := open(t, dir)
	older, newer := msg(topic, `{"type":"ENTER","marker":"older-record"}`), msg(topic, `{"type":"EXIT","marker":"newer-record"}`)
	if err := s.Write([]Write{older}); err != nil {
		t.Fatal(err)
	}
	var more []Write
	for i := range 200 { // the newer record lands on a later page
		more = append(more, msg(fmt.Sprintf("geofence/f99/pad-%04d", i), fmt.Sprintf(`{"pad":"%0150d"}`, i)))
	}
	if err := s.Write(more); err != nil {
		t.Fatal(err)
	}
	if err := s.Write([]Write{newer}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The leaf page in use that holds the newer record, and not the older.
	path := filepath.Join(dir, File)
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	ps := db.Info().PageSize
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := -1
	_ = db.View(func(tx *bbolt.Tx) error {
		for id := 2; int64(id*ps) < tx.Size(); id++ {
			p, err := tx.Page(id)
			if err != nil || p == nil {
				t.Fatalf("page %d: %v", id, err)
			}
			body := raw[id*ps : (id+1+p.OverflowCount)*ps]
			if p.Type == "leaf" && bytes.Contains(body, newer.Value) && !bytes.Contains(body, older.Value) {
				page = id
			}
			id += p.OverflowCount
		}
		return nil
	})
	db.Close()
	if page < 0 {
		t.Fatal("no leaf page in use holds the newer record apart from the older")
	}
	damaged := damage(t, dir, func(b []byte) []byte {
		b[page*ps+8] ^= 0x02 // the page's flags: a leaf becomes no known type
		return b
	})
	r, err := Repair(dir, nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if kept, err := os.ReadFile(r.Aside); err != nil || !bytes.Equal(kept, damaged) {
		t.Fatalf("the damaged file was not kept as it was at %q (%v)", r.Aside, err)
	}
	s = open(t, dir)
	defer s.Close()
	var got string
	if err := s.Retained(topic, func(m *storage.Message) { got = string(m.Payload) }); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "older-record") {
		t.Fatalf("%s after repair: %q, want the older record (the newer one was on the damaged page)", topic, got)
	}
}
