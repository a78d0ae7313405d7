package broker_test

import (
	"errors"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/output"
	"github.com/edgefence/edgefence/store"
)

// The server's client ids are its own: a network client connecting with
// the publisher's id, or mochi's inline client's, is refused with 0x85
// Client Identifier not valid (3.1.1: 0x02), anonymous or logged in as
// admin.
func TestServerClientIDsAreReserved(t *testing.T) {
	for _, auth := range []bool{false, true} {
		cfg := testConfig(t)
		cr := creds{}
		if auth {
			cfg.Auth = writeUsers(t, testUser{name: "ops", role: "admin"})
			cr = login("ops")
		}
		srv := start(t, cfg)
		for _, id := range []string{"edgefence-engine", "inline"} {
			for v, want := range map[byte]byte{5: packets.ErrClientIdentifierNotValid.Code, 4: packets.Err3ClientIdentifierNotValid.Code} {
				if got := dialRaw(t, srv.MQTTAddr(), v).connect(id, cr, 30).ReasonCode; got != want {
					t.Errorf("auth %v: MQTT v%d CONNECT as %q: CONNACK %#x, want %#x", auth, v, id, got, want)
				}
			}
		}
		dialRaw(t, srv.MQTTAddr(), 5).mustConnect("edgefence-engine-2", cr) // only the ids themselves
		closeServer(t, srv)
	}
}

// The attack: a retained ENTER ten years ahead, stored as a
// network client's retained message under the publisher's client id,
// became engine state at the next start and made every real ping of the
// device late. The store tells the server's records by a mark only the
// server's publisher writes, not by a client id: the client's is deleted
// at the restart, and the device's real ping decides its ENTER.
func TestRestoreTrustsTheServersMarkNotAClientID(t *testing.T) {
	cfg := testConfig(t)
	first := start(t, cfg)
	dash := connect5(t, first.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	connect5(t, first.MQTTAddr(), "tracker").ping("truck-1", museumLat, museumLon, nowMs()-60_000)
	expectTransitions(t, dash, "ENTER zone-museumsinsel truck-1")
	closeServer(t, first)

	// Stored as the store stores any client's retained publish.
	ahead := time.Now().AddDate(10, 0, 0)
	topic := "geofence/zone-museumsinsel/truck-2"
	pk := packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1, Retain: true},
		TopicName:   topic, Origin: "edgefence-engine", Created: time.Now().Unix(),
		Payload: output.TransitionJSON(&engine.Transition{Device: "truck-2", Fence: "zone-museumsinsel", Type: engine.Enter,
			Event: ahead.UnixNano(), Lat: museumLat, Lon: museumLon}, time.Now()),
	}
	st, err := store.Open(cfg.DataDir, store.Options{Log: testLog()})
	if err != nil {
		t.Fatal(err)
	}
	err = st.Write([]store.Write{{Topic: topic, Value: store.Encode(&mqtt.Client{ID: "edgefence-engine"}, &pk)}})
	if err := errors.Join(err, st.Close()); err != nil {
		t.Fatal(err)
	}

	second := start(t, cfg)
	if got := metric(t, second, `edgefence_restore_refused_total{reason="not_server"}`); got != 1 {
		t.Errorf("restore refused %v stored messages, want the client's one", got)
	}
	dash = connect5(t, second.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	connect5(t, second.MQTTAddr(), "tracker").ping("truck-2", museumLat, museumLon, nowMs())
	expectTransitions(t, dash, "ENTER zone-museumsinsel truck-1", "ENTER zone-museumsinsel truck-2")
	closeServer(t, second)
}
