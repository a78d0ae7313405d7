package store

import (
	"errors"
	"path/filepath"
	"testing"

	"go.etcd.io/bbolt"
)

// A data dir in the mochi layout (bucket "mochi", key "RET_" + topic,
// with the session records mochi's hook also kept): `store check` reads
// it as it is; the first open converts it to the append layout in one
// transaction — its retained messages all there, the mochi bucket and
// its other records gone — and a second open finds nothing to convert.
func TestMochiLayoutIsConvertedOnce(t *testing.T) {
	dir := t.TempDir()
	want := map[string]string{}
	db, err := bbolt.Open(filepath.Join(dir, File), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucket(mochiBucket)
		if err != nil {
			return err
		}
		for i, topic := range []string{"geofence/f/a", "geofence/f/b", "devices/d/config"} {
			w := msg(topic, string(rune('A'+i)))
			want[topic] = string(rune('A' + i))
			if err := b.Put([]byte(keyPrefix+topic), w.Value); err != nil {
				return err
			}
		}
		return errors.Join(b.Put([]byte("CL_dashboard"), []byte(`{}`)), b.Put([]byte("SUB_dashboard:geofence/#"), []byte(`{}`)))
	})
	if err := errors.Join(err, db.Close()); err != nil {
		t.Fatal(err)
	}
	if r, err := Check(dir, nil); err != nil || r.Damaged() || r.Records != 3 {
		t.Fatalf("check of the mochi layout: %+v, %v; want 3 records, nothing damaged", r, err)
	}

	for range 2 {
		s := open(t, dir)
		got := stored(t, s)
		var buckets []string
		_ = s.db.View(func(tx *bbolt.Tx) error {
			return tx.ForEach(func(name []byte, _ *bbolt.Bucket) error { buckets = append(buckets, string(name)); return nil })
		})
		records := s.records
		s.Close()
		if len(got) != len(want) || got["geofence/f/a"] != "A" || got["devices/d/config"] != "C" {
			t.Fatalf("after the conversion the store holds %v, want %v", got, want)
		}
		if len(buckets) != 1 || buckets[0] != string(recordsBucket) || records != 3 {
			t.Fatalf("buckets %v with %d records, want only %s with 3", buckets, records, recordsBucket)
		}
	}
	if r, err := Check(dir, nil); err != nil || r.Damaged() || r.Records != 3 {
		t.Fatalf("check after the conversion: %+v, %v", r, err)
	}
}
