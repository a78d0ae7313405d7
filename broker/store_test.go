package broker_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"github.com/mochi-mqtt/server/v2/packets"
	"go.etcd.io/bbolt"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/output"
	"github.com/edgefence/edgefence/store"
)

// A data dir written by mochi's bbolt storage hook (edgefence before it had
// its own store) keeps its fence state: the store reads the same file, the
// retained transitions are restored, and the hook's session, subscription
// and inflight records, which are no longer kept, are dropped.
func TestDataDirOfEarlierVersionKeepsFenceState(t *testing.T) {
	cfg := testConfig(t)
	path := filepath.Join(cfg.DataDir, "edgefence.db")
	db, err := bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	enter := storage.Message{
		ID: "RET_geofence/zone-museumsinsel/old-1", T: storage.RetainedKey, TopicName: "geofence/zone-museumsinsel/old-1",
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1, Retain: true},
		Payload: output.TransitionJSON(&engine.Transition{Device: "old-1", Fence: "zone-museumsinsel", Type: engine.Enter,
			Event: time.Now().Add(-10 * time.Second).UnixNano(), Lat: museumLat, Lon: museumLon}, time.Now().Add(-9*time.Second)),
		Created: time.Now().Unix(),
		// Every version published its transitions from the inline client
		// "edgefence-engine", and mochi's hook stored its id.
		Client: "edgefence-engine", Origin: "edgefence-engine",
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte("mochi"))
		if err != nil {
			return err
		}
		data, _ := enter.MarshalBinary()
		for k, v := range map[string][]byte{
			enter.ID:                   data,
			"CL_dashboard":             []byte(`{"id":"dashboard"}`),
			"SUB_dashboard:geofence/#": []byte(`{"filter":"geofence/#"}`),
			"IFM_tracker:12":           []byte(`{}`),
			"SYS_info":                 []byte(`{}`),
		} {
			if err := b.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	if m := dash.Next("the stored ENTER, retained"); m.Topic != enter.TopicName {
		t.Fatalf("got %s, want %s", m.Topic, enter.TopicName)
	}
	// Restored inside: a ping inside makes no second ENTER, one outside EXITs.
	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	tracker.ping("old-1", museumLat, museumLon, nowMs()-3000)
	tracker.ping("old-1", 52.50, 13.30, nowMs()-2000)
	expectTransitions(t, dash, "EXIT zone-museumsinsel old-1")
	closeServer(t, srv)

	// The file is in the append layout: the mochi bucket is gone, with
	// the records edgefence no longer keeps, and the store holds old-1's
	// retained transition alone; a restart remembers the EXIT.
	db, err = bbolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.View(func(tx *bbolt.Tx) error {
		if tx.Bucket([]byte("mochi")) != nil {
			t.Error("the mochi layout's bucket is still in the file")
		}
		return nil
	})
	db.Close()
	st, err := store.Open(cfg.DataDir, store.Options{Log: testLog()})
	if err != nil {
		t.Fatal(err)
	}
	var topics []string
	err = st.Retained("", func(m *storage.Message) { topics = append(topics, m.TopicName) })
	st.Close()
	if err != nil || len(topics) != 1 || topics[0] != enter.TopicName {
		t.Errorf("the store holds %q (%v), want %s only", topics, err, enter.TopicName)
	}
	again := start(t, cfg)
	later := connect5(t, again.MQTTAddr(), "later")
	later.Subscribe("geofence/+/old-1")
	if got := later.Sync(); len(got) != 1 || decodeTransition(t, "geofence", got[0]).Type != "EXIT" {
		t.Errorf("after a restart: %d retained messages for old-1, want its EXIT", len(got))
	}
}
