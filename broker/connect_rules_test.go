package broker_test

// The rules a CONNECT is held to beyond the login (issue 21): its will is
// a publish like any other, and a client id belongs to the user holding
// it. Each is tried on every listener, in MQTT 5 and 3.1.1.

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/internal/mqtttest"
)

// netListener dials one of a broker's MQTT listeners.
type netListener struct {
	name string
	dial func(t *testing.T) net.Conn
}

// everyListener starts a broker with the ACL users (aclUsers) on MQTT
// over TCP, MQTTS and secure WebSocket, and returns a dialer of each.
func everyListener(t *testing.T, set func(*broker.Config)) (*broker.Server, []netListener) {
	t.Helper()
	pki := newTestPKI(t)
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	cfg.TLSCert, cfg.TLSKey, cfg.TLSClientCA = pki.serverCert, pki.serverKey, pki.caCert
	cfg.TLSAddr, cfg.WSAddr = "127.0.0.1:0", "127.0.0.1:0"
	if set != nil {
		set(&cfg)
	}
	srv := start(t, cfg)
	return srv, []netListener{
		{"tcp", func(t *testing.T) net.Conn { return dialTCP(t, srv.MQTTAddr()) }},
		{"mqtts", func(t *testing.T) net.Conn {
			t.Helper()
			c, err := dialTLS(srv.TLSAddr(), pki.tlsConfig())
			if err != nil {
				t.Fatalf("TLS dial: %v", err)
			}
			return c
		}},
		{"wss", func(t *testing.T) net.Conn { return mustWS(t, "wss://"+srv.WSAddr()+"/mqtt", pki.tlsConfig()) }},
	}
}

// connect311 sends an MQTT 3.1.1 CONNECT (pk, protocol name set here)
// over conn and returns the CONNACK return code, or an error when the
// server closed the connection without one.
func connect311(conn net.Conn, pk packets.Packet) (byte, error) {
	pk.Connect.ProtocolName = []byte("MQTT")
	b, err := encodePacket(4, pk)
	if err != nil {
		return 0, err
	}
	_ = conn.SetDeadline(time.Now().Add(wait))
	if _, err := conn.Write(b); err != nil {
		return 0, err
	}
	ack, err := readPacket(bufio.NewReader(conn), 4)
	if err != nil {
		return 0, err
	}
	if ack.FixedHeader.Type != packets.Connack {
		return 0, fmt.Errorf("got packet type %d, want CONNACK", ack.FixedHeader.Type)
	}
	return ack.ReasonCode, nil
}

// will311 returns cp with a QoS 1 will on topic.
func will311(cp packets.Packet, topic string, retain bool, payload string) packets.Packet {
	cp.Connect.WillFlag, cp.Connect.WillTopic, cp.Connect.WillPayload = true, topic, []byte(payload)
	cp.Connect.WillQos, cp.Connect.WillRetain = 1, retain
	return cp
}

// A will is a publish the broker makes for the client later: a will the
// user may not publish is refused at CONNECT (0x87; 3.1.1 0x05), on every
// listener, and is never published nor retained. The forged retained
// ENTER of the issue would otherwise have become engine state at the next
// start. A will the user may publish still works.
func TestWillsFollowTheACL(t *testing.T) {
	var cfg *broker.Config
	srv, listeners := everyListener(t, func(c *broker.Config) { cfg = c })
	observer := mustDial5(t, srv.MQTTAddr(), "observer", login("ops"))
	observer.Barrier = "edgefence-test/barrier/observer"
	observer.Subscribe("devices/#", "geofence/#", "edgefence/#", "$SYS/x", observer.Barrier)

	forged := `{"device":"truck-2","fence":"zone-museumsinsel","type":"ENTER","ts":2111538653404,"forged":%q}`
	refused := []struct {
		user, topic string
		want5       byte // MQTT 5 CONNACK
		want3       int  // 3.1.1 CONNACK, -1: closed without one
	}{
		{"truck-1", "geofence/zone-museumsinsel/truck-2", 0x87, 0x05},
		{"truck-1", "geofence/zone-museumsinsel/truck-1", 0x87, 0x05}, // its own transition neither
		{"truck-1", "edgefence/admin/fences", 0x87, 0x05},
		{"truck-1", "devices/truck-2/telemetry", 0x87, 0x05},
		{"truck-1", "edgefence/late/truck-1", 0x87, 0x05},
		{"truck-1", "$SYS/x", 0x87, 0x05},
		{"wall", "devices/wall/telemetry", 0x87, 0x05}, // a dashboard publishes nothing
		{"ops", "geofence/zone-museumsinsel/truck-2", 0x87, 0x05},
		{"ops", "$sys/x", 0x87, 0x05},
		{"ops", "devices/+/telemetry", 0x90, -1}, // no topic name: no 3.1.1 code says it
	}
	for _, ln := range listeners {
		for i, c := range refused {
			what := fmt.Sprintf("%s: %s's will on %s", ln.name, c.user, c.topic)
			// MQTT 5 (paho.golang).
			conn := ln.dial(t)
			cp := &paho.Connect{ClientID: mqtttest.ID("will"), KeepAlive: 30, CleanStart: true,
				Username: c.user, UsernameFlag: true, Password: []byte(secret), PasswordFlag: true,
				WillMessage: &paho.WillMessage{Topic: c.topic, QoS: 1, Retain: true, Payload: fmt.Appendf(nil, forged, what)}}
			_, ca, err := mqtttest.Dial(t, conn, cp, wait)
			switch {
			case err == nil:
				conn.Close() // no DISCONNECT: the will goes out
				t.Errorf("MQTT 5 %s: accepted, want CONNACK %#x", what, c.want5)
			case ca == nil:
				t.Errorf("MQTT 5 %s: no CONNACK: %v", what, err)
			case ca.ReasonCode != c.want5:
				t.Errorf("MQTT 5 %s: CONNACK %#x, want %#x", what, ca.ReasonCode, c.want5)
			}
			// MQTT 3.1.1 (mochi's encoder over the socket).
			conn = ln.dial(t)
			pk := will311(connectPacket(fmt.Sprintf("will311-%s-%d", ln.name, i), login(c.user), 30), c.topic, true, fmt.Sprintf(forged, what+" (3.1.1)"))
			rc, err := connect311(conn, pk)
			switch {
			case err == nil && rc == 0:
				t.Errorf("MQTT 3.1.1 %s: accepted, want %d", what, c.want3)
			case err == nil && int(rc) != c.want3:
				t.Errorf("MQTT 3.1.1 %s: CONNACK %#x, want %d", what, rc, c.want3)
			case err != nil && c.want3 >= 0:
				t.Errorf("MQTT 3.1.1 %s: no CONNACK (%v), want %#x", what, err, c.want3)
			}
			conn.Close()
		}

		// A device's will on its own telemetry is its own publish: it is
		// accepted and goes out when the connection drops.
		conn := ln.dial(t)
		payload := "truck-1 lost over " + ln.name
		cp := &paho.Connect{ClientID: mqtttest.ID("own-will"), KeepAlive: 30, CleanStart: true,
			Username: "truck-1", UsernameFlag: true, Password: []byte(secret), PasswordFlag: true,
			WillMessage: &paho.WillMessage{Topic: "devices/truck-1/telemetry", QoS: 1, Payload: []byte(payload)}}
		if _, ca, err := mqtttest.Dial(t, conn, cp, wait); err != nil {
			t.Fatalf("%s: truck-1 with a will on its own telemetry: %v (%+v)", ln.name, err, ca)
		}
		conn.Close()
		if m := observer.Next("truck-1's will"); m.Topic != "devices/truck-1/telemetry" || string(m.Payload) != payload {
			t.Errorf("%s: observer got %s %q, want truck-1's will", ln.name, m.Topic, m.Payload)
		}
	}

	// Nothing forged was routed, and nothing was retained: a new
	// subscriber to everything gets no forged message.
	for _, m := range observer.Sync() {
		if strings.Contains(string(m.Payload), "forged") {
			t.Errorf("observer got a refused will on %s: %s", m.Topic, m.Payload)
		}
	}
	late := mustDial5(t, srv.MQTTAddr(), "late-admin", login("ops"))
	late.Barrier = "edgefence-test/barrier/late"
	late.Subscribe("#", "$SYS/x", "$sys/x", late.Barrier)
	for _, m := range late.Sync() {
		if strings.Contains(string(m.Payload), "forged") {
			t.Errorf("a refused will was retained on %s: %s", m.Topic, m.Payload)
		}
	}

	// Nor is anything forged restored at the next start: truck-2 has no
	// ENTER stamped 2036 in its state, and its real ping enters the fence.
	closeServer(t, srv)
	srv = start(t, *cfg)
	wall := mustDial5(t, srv.MQTTAddr(), "wall", login("wall"))
	wall.Subscribe("geofence/+/truck-2")
	truck2 := mustDial5(t, srv.MQTTAddr(), "truck-2", login("truck-2"))
	ts := nowMs() - 10_000
	truck2.ping("truck-2", museumLat, museumLon, ts)
	if tr := expectTransitions(t, wall, "ENTER zone-museumsinsel truck-2")[0]; tr.Ts != ts {
		t.Errorf("after the restart, truck-2's ENTER is stamped %d, want its ping's %d", tr.Ts, ts)
	}
}

// session5 connects an MQTT 5 client with id over conn, starting clean
// or resuming the session, which is kept expiry seconds after the
// connection ends.
func session5(t *testing.T, conn net.Conn, id string, cr creds, clean bool, expiry uint32) (*client5, *paho.Connack, error) {
	t.Helper()
	cp := &paho.Connect{ClientID: id, KeepAlive: 30, CleanStart: clean,
		Username: cr.user, UsernameFlag: true, Password: []byte(cr.pass), PasswordFlag: true,
		Properties: &paho.ConnectProperties{SessionExpiryInterval: &expiry}}
	cl, ca, err := mqtttest.Dial(t, conn, cp, wait)
	if err != nil {
		return nil, ca, err
	}
	cl.RetainAsPublished = true
	return &client5{cl}, ca, nil
}

// A client id belongs to the user holding it, while it is connected and
// while its session is kept: another user's CONNECT with it is refused
// (0x85; 3.1.1 0x02), the holder keeps its connection, and its session,
// with what was queued for it, is never handed over. Once the session
// ends, the id is free. The holder's own user may take it over, as MQTT
// says.
func TestClientIDsBelongToTheirUser(t *testing.T) {
	srv, listeners := everyListener(t, nil)
	pinger := mustDial5(t, srv.MQTTAddr(), "pinger", login("ops"))
	t0 := nowMs() - 60_000
	for n, ln := range listeners {
		id := "dashboard-" + ln.name
		device := "cid-" + ln.name
		ts := t0 + int64(n)*10_000
		wall, ca, err := session5(t, ln.dial(t), id, login("wall"), true, 300)
		if err != nil {
			t.Fatalf("%s: wall connects as %s: %v (%+v)", ln.name, id, err, ca)
		}
		wall.Subscribe("geofence/+/" + device)

		intruders := func(when string) {
			t.Helper()
			for _, clean := range []bool{true, false} {
				_, ca, err := session5(t, ln.dial(t), id, login("truck-1"), clean, 300)
				switch {
				case err == nil:
					t.Errorf("%s, %s: truck-1 (clean %v) took client id %s of wall", ln.name, when, clean, id)
				case ca == nil:
					t.Errorf("%s, %s: truck-1 (clean %v) with client id %s: no CONNACK: %v", ln.name, when, clean, id, err)
				case ca.ReasonCode != 0x85:
					t.Errorf("%s, %s: truck-1 (clean %v) with client id %s: CONNACK %#x, want 0x85", ln.name, when, clean, id, ca.ReasonCode)
				}
				pk := connectPacket(id, login("truck-1"), 30)
				pk.Connect.Clean = clean
				conn := ln.dial(t)
				rc, err := connect311(conn, pk)
				conn.Close()
				if err != nil || rc != 0x02 {
					t.Errorf("%s, %s: 3.1.1 truck-1 (clean %v) with client id %s: CONNACK %#x (%v), want 0x02", ln.name, when, clean, id, rc, err)
				}
			}
		}

		// While wall is connected.
		intruders("holder connected")
		pinger.ping(device, museumLat, museumLon, ts)
		expectTransitions(t, wall, "ENTER zone-museumsinsel "+device) // still connected

		// While its session is kept, with a transition queued in it.
		if err := wall.Paho.Disconnect(&paho.Disconnect{}); err != nil {
			t.Fatal(err)
		}
		intruders("holder's session kept")
		// A transition queued in the session (QoS 1: mochi keeps it
		// inflight until the session's client acknowledges it).
		pinger.ping(device, outLat, outLon, ts+1000)
		pinger.flush()
		intruders("holder's session kept, a message queued")
		wall, ca, err = session5(t, ln.dial(t), id, login("wall"), false, 300)
		if err != nil || !ca.SessionPresent {
			t.Fatalf("%s: wall resumes its session: %v (%+v)", ln.name, err, ca)
		}
		// The EXIT queued while it was away; the ENTER may come again
		// first, redelivered at QoS 1 if its PUBACK had not gone out when
		// wall disconnected.
		if tr := nextTransition(t, wall, "EXIT"); tr.short() != "EXIT zone-museumsinsel "+device {
			if tr.short() != "ENTER zone-museumsinsel "+device {
				t.Fatalf("%s: wall resumed and got %s first, want the queued EXIT", ln.name, tr)
			}
			expectTransitions(t, wall, "EXIT zone-museumsinsel "+device)
		}

		// Its own user takes it over (mochi tells the old connection).
		again, ca, err := session5(t, ln.dial(t), id, login("wall"), false, 300)
		if err != nil || !ca.SessionPresent {
			t.Fatalf("%s: wall takes over its own session: %v (%+v)", ln.name, err, ca)
		}
		// A clean start ends the session at disconnect: the id is free.
		if err := again.Paho.Disconnect(&paho.Disconnect{}); err != nil {
			t.Fatal(err)
		}
		clean, ca, err := session5(t, ln.dial(t), id, login("wall"), true, 0)
		if err != nil {
			t.Fatalf("%s: wall with a clean start: %v (%+v)", ln.name, err, ca)
		}
		if err := clean.Paho.Disconnect(&paho.Disconnect{}); err != nil {
			t.Fatal(err)
		}
		var taken bool
		for range 50 { // the broker handles the DISCONNECT after paho returns
			if _, _, err := session5(t, ln.dial(t), id, login("truck-1"), true, 0); err == nil {
				taken = true
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if !taken {
			t.Errorf("%s: client id %s still refused to another user after its session ended", ln.name, id)
		}
	}
}

// Clients that let the broker pick their id, or pick a random one, are
// not held to anything.
func TestRandomClientIDsStillConnect(t *testing.T) {
	_, listeners := everyListener(t, nil)
	for _, ln := range listeners {
		for _, user := range []string{"truck-1", "truck-2", "wall", "ops"} {
			cp := &paho.Connect{KeepAlive: 30, CleanStart: true, // no id: the broker assigns one
				Username: user, UsernameFlag: true, Password: []byte(secret), PasswordFlag: true}
			if _, ca, err := mqtttest.Dial(t, ln.dial(t), cp, wait); err != nil {
				t.Errorf("%s: %s without a client id: %v (%+v)", ln.name, user, err, ca)
			}
			if _, ca, err := dialMQTT5(t, ln.dial(t), user, login(user)); err != nil {
				t.Errorf("%s: %s with a random client id: %v (%+v)", ln.name, user, err, ca)
			}
		}
	}
}

// With --strict-client-ids a device's client id must be its username or
// start with "username/" (a device name has no '/', so no other device's
// name does): other devices' ids are refused even when nobody holds them,
// to every role. Ids the broker assigns are not held to it.
func TestStrictClientIDs(t *testing.T) {
	_, listeners := everyListener(t, func(c *broker.Config) { c.StrictClientIDs = true })
	for _, ln := range listeners {
		for _, c := range []struct {
			user, id string
			ok       bool
		}{
			{"truck-1", "truck-1", true},
			{"truck-1", "truck-1/cab", true},
			{"truck-1", "", true}, // assigned by the broker
			{"truck-1", "truck-2", false},
			{"truck-1", "truck-10", false},
			{"truck-1", "truck-1-cab", false},
			{"truck-1", "random-4711", false},
			{"wall", "random-4712-" + ln.name, true},
			{"ops", "truck-2", false}, // a device's id is its own
			{"wall", "truck-1/cab", false},
			{"ops", "ops-console", true},
		} {
			cp := &paho.Connect{ClientID: c.id, KeepAlive: 30, CleanStart: true,
				Username: c.user, UsernameFlag: true, Password: []byte(secret), PasswordFlag: true}
			cl, ca, err := mqtttest.Dial(t, ln.dial(t), cp, wait)
			switch {
			case c.ok && err != nil:
				t.Errorf("%s: %s with client id %q: %v (%+v), want accepted", ln.name, c.user, c.id, err, ca)
			case !c.ok && err == nil:
				t.Errorf("%s: %s with client id %q accepted, want 0x85", ln.name, c.user, c.id)
			case !c.ok && (ca == nil || ca.ReasonCode != 0x85):
				t.Errorf("%s: %s with client id %q: %v (%+v), want CONNACK 0x85", ln.name, c.user, c.id, err, ca)
			}
			if err == nil {
				_ = cl.Paho.Disconnect(&paho.Disconnect{}) // free the id for the next listener
			}
		}
		pk := connectPacket("truck-2", login("truck-1"), 30)
		conn := ln.dial(t)
		if rc, err := connect311(conn, pk); err != nil || rc != 0x02 {
			t.Errorf("%s: 3.1.1 truck-1 with client id truck-2: CONNACK %#x (%v), want 0x02", ln.name, rc, err)
		}
		conn.Close()
	}
}

// MQTT 3.1.1 has return codes 0x00-0x05 only. A zero-length password is
// a password (MQTT 3.1.1 and 5, 3.1.3.5): with a user file it is a wrong
// one (3.1.1 0x05, MQTT 5 0x86), not a protocol error (0x82, which mochi
// sent, and which 3.1.1 does not have).
func TestEmptyPasswordIsAWrongPassword(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	srv := start(t, cfg)
	empty := connectPacket("empty-password", creds{user: "truck-1"}, 30)
	empty.Connect.PasswordFlag = true
	conn := dialTCP(t, srv.MQTTAddr())
	if rc, err := connect311(conn, empty); err != nil || rc != 0x05 {
		t.Errorf("3.1.1 zero-length password: CONNACK %#x (%v), want 0x05", rc, err)
	}
	conn.Close()
	r := rawDial(t, srv.MQTTAddr())
	empty.Connect.ProtocolName = []byte("MQTT")
	if err := r.send(empty); err != nil {
		t.Fatal(err)
	}
	if ack, err := r.read(); err != nil || ack.FixedHeader.Type != packets.Connack || ack.ReasonCode != 0x86 {
		t.Errorf("MQTT 5 zero-length password: %+v (%v), want CONNACK 0x86", ack, err)
	}
	// Without a user file the password is not asked for.
	anon := testConfig(t)
	srv = start(t, anon)
	conn = dialTCP(t, srv.MQTTAddr())
	if rc, err := connect311(conn, empty); err != nil || rc != 0 {
		t.Errorf("3.1.1 zero-length password, no user file: CONNACK %#x (%v), want 0", rc, err)
	}
	conn.Close()
}
