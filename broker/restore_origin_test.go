package broker_test

import (
	"testing"

	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/store"
)

// Only the server's own transitions become engine state at a restart. A
// retained message on a transition topic that a client wrote — a forged
// will stored by an older version, a hand-edited store — is neither
// restored nor served to dashboards: it is deleted and counted, and the
// device it names gets its real transitions.
func TestRestoreRefusesTransitionsTheServerDidNotWrite(t *testing.T) {
	cfg := testConfig(t)
	t0 := nowMs() - 60_000

	first := start(t, cfg)
	dash := connect5(t, first.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	connect5(t, first.MQTTAddr(), "tracker").ping("truck-1", museumLat, museumLon, t0)
	expectTransitions(t, dash, "ENTER zone-museumsinsel truck-1")
	closeServer(t, first)

	// The forged will: truck-2 "inside" with a stamp in 2036, which
	// would make every real ping of truck-2 late until then.
	forged := storage.Message{
		ID: "RET_geofence/zone-museumsinsel/truck-2", T: storage.RetainedKey,
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Retain: true, Qos: 1},
		TopicName:   "geofence/zone-museumsinsel/truck-2",
		Payload:     []byte(`{"device":"truck-2","fence":"zone-museumsinsel","type":"ENTER","ts":2111538653404}`),
		Client:      "truck-1", Origin: "truck-1",
	}
	value, err := forged.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(cfg.DataDir, store.Options{Log: testLog()})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Write([]store.Write{{Topic: forged.TopicName, Value: value}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	second := start(t, cfg)
	if got := metric(t, second, `edgefence_restore_refused_total{reason="not_server"}`); got != 1 {
		t.Errorf("restore refused %v stored messages, want the forged one", got)
	}
	dash = connect5(t, second.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	for _, m := range dash.Sync() {
		if tr := decodeTransition(t, "geofence", m); tr.Device != "truck-1" {
			t.Errorf("after restart a dashboard was served %s", tr)
		}
	}
	connect5(t, second.MQTTAddr(), "tracker").ping("truck-2", museumLat, museumLon, nowMs())
	expectTransitions(t, dash, "ENTER zone-museumsinsel truck-2")
	closeServer(t, second)

	third := start(t, cfg) // the forged message was deleted, not only skipped
	if got := metric(t, third, `edgefence_restore_refused_total{reason="not_server"}`); got != 0 {
		t.Errorf("the forged message was refused again at the next start (%v): it was not deleted", got)
	}
	closeServer(t, third)
}
