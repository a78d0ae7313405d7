package store

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mochi-mqtt/server/v2/hooks/storage"
)

// flipMeta flips a byte at offset at of meta page n's meta in dir's store
// (page 0's page size locates page 1), after reading both pages' txids.
func flipMeta(t *testing.T, dir string, newer bool, page0 bool, at int) {
	t.Helper()
	path := filepath.Join(dir, File)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.NativeEndian.Uint32(b[pageHeader+8:]))
	txid := func(i int) uint64 { return binary.NativeEndian.Uint64(b[i*ps+pageHeader+metaTxid:]) }
	n := 0
	if (txid(1) > txid(0)) == newer {
		n = 1
	}
	if page0 {
		n = 0
	}
	b[n*ps+pageHeader+at] ^= 0x10
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// After a clean close both meta pages are valid. Either one damaged is
// refused, the older one too (bbolt would open the newer, but the rule is
// one rule): Open fails naming the page and the repair command, Check
// reports it, and Repair keeps the valid page's commit: the one before
// the last when the newer page is damaged, the last (nothing lost) when
// the older one is. With page 0's magic gone, page 1 is still found.
func TestEitherMetaPageInvalidIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name         string
		newer, page0 bool
		at           int
		want         string // a/b after repair
	}{
		{"newer page's checksum", true, false, metaChecksum, "2"},
		{"older page's root", false, false, 16, "3"},
		{"page 0's magic", false, true, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir)
			for _, v := range []string{"1", "2", "3"} {
				if err := s.Write([]Write{msg("a/b", v)}); err != nil {
					t.Fatal(err)
				}
			}
			s.Close()
			if p := checkMeta(filepath.Join(dir, File)); p != nil {
				t.Fatalf("after a clean close: %v", p)
			}
			flipMeta(t, dir, tc.newer, tc.page0, tc.at)

			_, err := Open(dir, Options{Log: quiet})
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "is invalid") || !strings.Contains(err.Error(), "edgefence store repair --data-dir "+dir) {
				t.Fatalf("open: %v, want ErrDamaged naming the meta page and the repair", err)
			}
			r, err := Check(dir, nil)
			if err != nil || len(r.Meta) != 1 || !r.Damaged() {
				t.Fatalf("check: %+v, %v; want one meta page reported", r, err)
			}
			if _, err := Repair(dir, nil, quiet); err != nil {
				t.Fatal(err)
			}
			if r, err := Check(dir, nil); err != nil || r.Damaged() {
				t.Fatalf("check after repair: %+v, %v", r, err)
			}
			s = open(t, dir)
			got := stored(t, s)["a/b"]
			s.Close()
			if tc.want != "" && got != tc.want {
				t.Errorf("after repair a/b is %q, want %q", got, tc.want)
			}
		})
	}
}

// The records earlier versions' publisher wrote (client and origin its
// id) are marked as the server's once, when a store of that format is
// first opened with Own; a client's are not, and a record written under
// that id after the upgrade (a client's, then) is never marked.
func TestUpgradeMarksEarlierServerRecordsOnce(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir) // no Own: nothing upgraded
	legacy := func(topic, client string) Write {
		w := msg(topic, "x")
		m, err := decode([]byte(topic), w.Value)
		if err != nil {
			t.Fatal(err)
		}
		m.Client, m.Origin = client, client
		w.Value, _ = m.MarshalBinary()
		return w
	}
	if err := s.Write([]Write{legacy("geofence/f/a", "edgefence-engine"), legacy("geofence/f/b", "truck-1")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	marked := func() map[string]bool {
		s, err := Open(dir, Options{Log: quiet, Own: "edgefence-engine"})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		out := map[string]bool{}
		if err := s.Retained("", func(m *storage.Message) { out[m.TopicName] = IsServer(m) }); err != nil {
			t.Fatal(err)
		}
		if len(out) == 2 {
			if err := s.Write([]Write{legacy("geofence/f/c", "edgefence-engine")}); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	if got := marked(); !got["geofence/f/a"] || got["geofence/f/b"] {
		t.Fatalf("first open: %v, want a marked, b not", got)
	}
	if got := marked(); got["geofence/f/c"] || !got["geofence/f/a"] {
		t.Fatalf("second open: %v, want c (written after the upgrade) not marked", got)
	}
}
