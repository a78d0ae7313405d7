package broker_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mqtt3 "github.com/eclipse/paho.mqtt.golang"
	mqtt3packets "github.com/eclipse/paho.mqtt.golang/packets"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/internal/mqtttest"
)

// The users of the access-control tests.
var aclUsers = []testUser{
	{name: "truck-1", role: "device"},
	{name: "truck-2", role: "device", readOwn: true},
	{name: "alice-phone", role: "device"}, // OwnTracks owntracks/alice/phone
	{name: "wall", role: "dashboard"},
	{name: "ops", role: "admin"},
	{name: "gateway-7", role: "device", noPass: true}, // certificate only
}

const (
	granted = 0x01 // SUBACK: QoS 1 granted
	denied  = 0x87 // not authorised, in PUBACK and SUBACK
)

// Every role tries every operation over real MQTT 5 connections: each
// denial is a 0x87 and has no effect (nothing routed, nothing evaluated),
// each permission works end to end.
func TestAccessControlMatrix(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	srv := start(t, cfg)
	addr := srv.MQTTAddr()

	// The observer is an admin that sees every topic a forgery could
	// reach; the tests read it after each phase.
	observer := mustDial5(t, addr, "observer", login("ops"))
	observer.Barrier = "edgefence-test/barrier/observer"
	observer.Subscribe("devices/#", "owntracks/#", "geofence/#", "edgefence/#", "$SYS/x", observer.Barrier)

	type role struct {
		name    string // username
		readOwn bool
		cl      *client5
	}
	roles := []*role{{name: "truck-1"}, {name: "truck-2", readOwn: true}, {name: "wall"}, {name: "ops"}}
	for _, r := range roles {
		r.cl = mustDial5(t, addr, "role-"+r.name, login(r.name))
	}
	allow := func(r *role, device, deviceReadOwn, dashboard, admin bool) bool {
		switch {
		case r.name == "wall":
			return dashboard
		case r.name == "ops":
			return admin
		case r.readOwn:
			return deviceReadOwn
		}
		return device
	}
	other := func(r *role) string { // another device's name
		if r.name == "truck-1" {
			return "truck-2"
		}
		return "truck-1"
	}

	// Phase 1: subscriptions, before anything is published, so that each
	// granted subscriber sees every later message exactly once.
	subs := []struct {
		name   string
		filter func(r *role) string
		d, dro bool // device, device with read_own_transitions
		db, ad bool // dashboard, admin
	}{
		{"all transitions", func(*role) string { return "geofence/#" }, false, false, true, true},
		{"own transitions", func(r *role) string { return "geofence/+/" + r.name }, false, true, true, true},
		{"own transitions in one fence", func(r *role) string { return "geofence/zone-museumsinsel/" + r.name }, false, true, true, true},
		{"another device's transitions", func(r *role) string { return "geofence/+/" + other(r) }, false, false, true, true},
		{"transitions shared", func(*role) string { return "$share/g/geofence/#" }, false, false, true, true},
		{"raw telemetry", func(*role) string { return "devices/#" }, false, false, false, true},
		{"own raw telemetry", func(r *role) string { return "devices/" + r.name + "/telemetry" }, false, false, false, true},
		{"late pings", func(*role) string { return "edgefence/late/#" }, false, false, true, true},
		{"rejects", func(*role) string { return "edgefence/rejected/#" }, false, false, true, true},
		{"everything", func(*role) string { return "#" }, false, false, false, true},
		{"$SYS", func(*role) string { return "$SYS/#" }, false, false, false, true},
	}
	for _, r := range roles {
		for _, s := range subs {
			want := byte(denied)
			if allow(r, s.d, s.dro, s.db, s.ad) {
				want = granted
			}
			if got := r.cl.subscribeRC(s.filter(r)); got != want {
				t.Errorf("%s subscribes %s (%s): SUBACK %#x, want %#x", r.name, s.filter(r), s.name, got, want)
			}
		}
	}

	// Phase 2: publishes. Each payload is unique, to find it downstream.
	t0 := nowMs() - 30_000
	var seq int64
	type sent struct {
		topic, payload string
		allowed        bool
	}
	var all []sent
	pubs := []struct {
		name       string
		topic      func(r *role) string
		telemetry  bool
		d, dro, db bool
		ad         bool
	}{
		{"own telemetry", func(r *role) string { return "devices/" + r.name + "/telemetry" }, true, true, true, false, true},
		{"another device's telemetry", func(r *role) string { return "devices/victim-" + r.name + "/telemetry" }, true, false, false, false, true},
		{"a transition", func(r *role) string { return "geofence/zone-museumsinsel/" + r.name }, false, false, false, false, false},
		{"a transition of another device", func(*role) string { return "geofence/x/y" }, false, false, false, false, false},
		{"a late report", func(r *role) string { return "edgefence/late/" + r.name }, false, false, false, false, false},
		{"a reject report", func(*role) string { return "edgefence/rejected/x" }, false, false, false, false, false},
		{"the bare reject topic", func(*role) string { return "edgefence/rejected" }, false, false, false, false, false},
		{"$SYS", func(*role) string { return "$SYS/x" }, false, false, false, false, false},
	}
	for _, r := range roles {
		for _, p := range pubs {
			seq++
			payload := fmt.Sprintf("forged-%s-%d", r.name, seq)
			if p.telemetry {
				payload = string(canonical(museumLat, museumLon, t0+seq))
			}
			topic := p.topic(r)
			allowed := allow(r, p.d, p.dro, p.db, p.ad)
			want := byte(denied)
			if allowed {
				want = 0
			}
			if got := r.cl.Publish(topic, 1, []byte(payload)); got != want {
				t.Errorf("%s publishes %s (%s): PUBACK %#x, want %#x", r.name, topic, p.name, got, want)
			}
			all = append(all, sent{topic, payload, allowed})
		}
		// A SUBACK comes after the client's earlier publishes are routed
		// (a PUBACK may come before): a barrier for this client.
		r.cl.subscribeRC("edgefence-test/barrier/none")
	}

	// Allowed publishes reached the admin observer once each; refused ones
	// never did.
	got := map[string]int{}
	for _, m := range observer.Sync() {
		if strings.HasPrefix(m.Topic, "geofence/") && !strings.Contains(string(m.Payload), "forged") {
			continue // the server's transitions: checked below
		}
		got[m.Topic+" "+string(m.Payload)]++
	}
	for _, s := range all {
		n := got[s.topic+" "+s.payload]
		switch {
		case s.allowed && n != 1:
			t.Errorf("allowed publish on %s delivered %d times, want once", s.topic, n)
		case !s.allowed && n != 0:
			t.Errorf("refused publish on %s %q was delivered %d times", s.topic, s.payload, n)
		}
		delete(got, s.topic+" "+s.payload)
	}
	for k := range got {
		t.Errorf("observer got an unexpected message: %s", k)
	}

	// The engine saw the allowed pings only: truck-1, truck-2, ops and
	// the device ops published for. The dashboard and the admin see their
	// transitions, in no particular order across devices.
	wantDevices := []string{"ops", "truck-1", "truck-2", "victim-ops"}
	for _, r := range roles {
		if r.name != "wall" && r.name != "ops" {
			continue
		}
		var devices []string
		for range wantDevices {
			tr := nextTransitionOnly(t, r.cl, "ENTER of an allowed ping")
			if tr.Type != "ENTER" || tr.Fence != "zone-museumsinsel" {
				t.Errorf("%s got %s, want ENTER zone-museumsinsel", r.name, tr)
			}
			devices = append(devices, tr.Device)
		}
		slices.Sort(devices)
		if !slices.Equal(devices, wantDevices) {
			t.Errorf("%s got transitions of %v, want %v", r.name, devices, wantDevices)
		}
	}
	// truck-2 reads its own transition, and truck-1 (no
	// read_own_transitions) nothing.
	if tr := nextTransition(t, roles[1].cl, "truck-2's own ENTER"); tr.short() != "ENTER zone-museumsinsel truck-2" {
		t.Errorf("truck-2 got %s, want its own ENTER", tr)
	}
	if v := metric(t, srv, "edgefence_pings_received_total"); v != float64(len(wantDevices)) {
		t.Errorf("edgefence_pings_received_total = %v, want %d: a refused publish reached the engine", v, len(wantDevices))
	}
	select {
	case m := <-roles[0].cl.Msgs:
		t.Errorf("truck-1 (no read_own_transitions) received %s", m.Topic)
	default:
	}

	// OwnTracks: owntracks/alice/phone is device alice-phone.
	alice := mustDial5(t, addr, "alice", login("alice-phone"))
	owntracks := fmt.Appendf(nil, `{"_type":"location","lat":%v,"lon":%v,"tst":%d}`, alexLat, alexLon, (t0+5000)/1000)
	for _, c := range []struct {
		topic string
		want  byte
	}{
		{"owntracks/alice/phone", 0},
		{"owntracks/alice/tablet", denied},
		{"owntracks/bob/phone", denied},
		{"owntracks/alice-phone/x", denied},
		{"devices/alice-phone/telemetry", 0}, // the same device id on the other filter
		{"devices/alice/telemetry", denied},
	} {
		if got := alice.Publish(c.topic, 1, owntracks); got != c.want {
			t.Errorf("alice-phone publishes %s: PUBACK %#x, want %#x", c.topic, got, c.want)
		}
	}
	if tr := nextTransition(t, roles[2].cl, "alice-phone's ENTER"); tr.short() != "ENTER customer-alex alice-phone" {
		t.Errorf("dashboard got %s, want ENTER customer-alex alice-phone", tr)
	}
}

// Logins that must fail get CONNACK 0x86 (bad username or password) and
// nothing else: MQTT 5 and 3.1.1 (0x04), whatever is wrong.
func TestAuthenticationFailures(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	srv := start(t, cfg)
	addr := srv.MQTTAddr()
	for _, c := range []struct {
		name string
		cr   creds
	}{
		{"wrong password", creds{"truck-1", "wrong"}},
		{"unknown user", creds{"nobody", secret}},
		{"no credentials", anonymous},
		{"username without password", creds{user: "truck-1"}},
		{"certificate-only user with a password", creds{"gateway-7", secret}},
	} {
		if rc := refused5(t, dialTCP(t, addr), "login-"+c.name, c.cr); rc != 0x86 {
			t.Errorf("%s: CONNACK %#x, want 0x86", c.name, rc)
		}
	}
	// The right password still works after the failures.
	mustDial5(t, addr, "good", login("truck-1"))

	// MQTT 3.1.1 has no 0x86: mochi maps it to return code 0x05 (not
	// authorised), not 0x04 (bad user name or password).
	for _, c := range []struct {
		name string
		cr   creds
	}{
		{"wrong password", creds{"truck-1", "wrong"}},
		{"unknown user", creds{"nobody", secret}},
	} {
		_, err := dial3(t, addr, "login311-"+c.name, c.cr)
		if !errors.Is(err, mqtt3packets.ErrorRefusedNotAuthorised) {
			t.Errorf("MQTT 3.1.1 %s: %v, want CONNACK 0x05 (not authorised)", c.name, err)
		}
	}
}

// client3 is an MQTT 3.1.1 client that reports losing its connection.
type client3 struct {
	mqtt3.Client
	lost chan struct{}
}

// dial3 connects an MQTT 3.1.1 client (paho.mqtt.golang) with credentials.
func dial3(t *testing.T, addr, name string, cr creds) (*client3, error) {
	t.Helper()
	c := &client3{lost: make(chan struct{})}
	var once sync.Once
	opts := mqtt3.NewClientOptions().
		AddBroker("tcp://" + addr).
		SetClientID(mqtttest.ID(name)).
		SetProtocolVersion(4).
		SetCleanSession(true).
		SetAutoReconnect(false).
		SetConnectRetry(false).
		SetConnectTimeout(wait).
		SetWriteTimeout(wait).
		SetUsername(cr.user).
		SetPassword(cr.pass).
		SetConnectionLostHandler(func(mqtt3.Client, error) { once.Do(func() { close(c.lost) }) })
	c.Client = mqtt3.NewClient(opts)
	tok := c.Connect()
	if !tok.WaitTimeout(wait) {
		return nil, errors.New("MQTT 3.1.1 connect: no CONNACK")
	}
	if err := tok.Error(); err != nil {
		return nil, err
	}
	t.Cleanup(func() { c.Disconnect(100) })
	return c, nil
}

// subscribe3 returns the 3.1.1 SUBACK code (0x00-0x02 granted, 0x80 failure).
func subscribe3(t *testing.T, c mqtt3.Client, filter string, h mqtt3.MessageHandler) byte {
	t.Helper()
	tok := c.Subscribe(filter, 1, h)
	if !tok.WaitTimeout(wait) || tok.Error() != nil {
		t.Fatalf("3.1.1 subscribe %s: %v", filter, tok.Error())
	}
	return tok.(*mqtt3.SubscribeToken).Result()[filter]
}

// The same rules for MQTT 3.1.1 clients, which have no reason codes: a
// refused QoS 0 publish is dropped, a refused QoS 1 publish disconnects
// the client (mochi), a refused subscription gets 0x80, and nothing
// refused is delivered.
func TestAccessControlMQTT311(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	srv := start(t, cfg)
	addr := srv.MQTTAddr()
	observer := mustDial5(t, addr, "observer", login("ops"))
	observer.Barrier = "edgefence-test/barrier/observer"
	observer.Subscribe("devices/#", "geofence/#", "edgefence/#", observer.Barrier)

	truck, err := dial3(t, addr, "truck-311", login("truck-1"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := nowMs() - 30_000
	own := canonical(museumLat, museumLon, t0)
	publish3(t, truck, "devices/truck-1/telemetry", 1, own)
	publish3(t, truck, "devices/truck-9/telemetry", 0, canonical(museumLat, museumLon, t0))
	publish3(t, truck, "geofence/zone-museumsinsel/truck-9", 0, []byte("forged-q0"))
	publish3(t, truck, "$SYS/x", 0, []byte("forged-sys-q0"))
	for _, f := range []string{"geofence/#", "geofence/+/truck-1", "devices/#"} {
		if rc := subscribe3(t, truck, f, nil); rc != 0x80 {
			t.Errorf("3.1.1 device subscribes %s: SUBACK %#x, want 0x80", f, rc)
		}
	}
	// The SUBACKs came after the publishes were routed.
	var topics []string
	for _, m := range observer.Sync() {
		if strings.HasPrefix(m.Topic, "geofence/") && !strings.Contains(string(m.Payload), "forged") {
			continue // the ENTER of the allowed ping
		}
		topics = append(topics, m.Topic)
	}
	if !slices.Equal(topics, []string{"devices/truck-1/telemetry"}) {
		t.Errorf("observer got %q, want only the device's own telemetry", topics)
	}
	if !truck.IsConnectionOpen() {
		t.Fatal("3.1.1 device disconnected after refused QoS 0 publishes")
	}

	// A refused QoS 1 publish: mochi disconnects the 3.1.1 client (it
	// cannot be told "not authorised" in a PUBACK), and routes nothing.
	tok := truck.Publish("geofence/zone-museumsinsel/truck-1", 1, false, []byte("forged-q1"))
	select {
	case <-truck.lost:
	case <-time.After(wait):
		t.Fatal("3.1.1 device still connected after a refused QoS 1 publish")
	}
	tok.WaitTimeout(wait)
	if tok.Error() == nil {
		t.Error("refused 3.1.1 QoS 1 publish completed without error")
	}

	// A 3.1.1 dashboard reads transitions (here the retained ENTER).
	wall, err := dial3(t, addr, "wall-311", login("wall"))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 16)
	if rc := subscribe3(t, wall, "geofence/#", func(_ mqtt3.Client, m mqtt3.Message) { got <- m.Topic() + " " + string(m.Payload()) }); rc != 1 {
		t.Fatalf("3.1.1 dashboard subscribes geofence/#: SUBACK %#x, want 1", rc)
	}
	if rc := subscribe3(t, wall, "devices/#", nil); rc != 0x80 {
		t.Errorf("3.1.1 dashboard subscribes devices/#: SUBACK %#x, want 0x80", rc)
	}
	select {
	case m := <-got:
		if !strings.HasPrefix(m, "geofence/zone-museumsinsel/truck-1 ") || !strings.Contains(m, `"type":"ENTER"`) {
			t.Errorf("3.1.1 dashboard got %s, want truck-1's ENTER", m)
		}
	case <-time.After(wait):
		t.Fatal("3.1.1 dashboard got no transition")
	}
	observer.flush()
	for _, m := range observer.Sync() {
		if strings.Contains(string(m.Payload), "forged") {
			t.Errorf("observer got the refused publish on %s", m.Topic)
		}
	}
}

// With no --auth, anyone may publish telemetry, but the server's own
// topics stay reserved: the transition prefix, the late and reject topics
// (as configured) and $SYS.
func TestReservedTopicsWithoutAuth(t *testing.T) {
	cfg := testConfig(t)
	cfg.TransitionPrefix = "fleet/transitions"
	cfg.LateTopic = "fleet/late"
	cfg.RejectTopic = "fleet/rejected"
	srv := start(t, cfg)
	observer := connect5(t, srv.MQTTAddr(), "observer")
	observer.Subscribe("fleet/#", "geofence/#", "edgefence/#", "$SYS/x", "$sys/x")
	cl := connect5(t, srv.MQTTAddr(), "anon")
	for _, c := range []struct {
		topic string
		want  byte
	}{
		{"fleet/transitions/zone-museumsinsel/truck-1", denied},
		{"fleet/transitions", denied},
		{"fleet/late/truck-1", denied},
		{"fleet/rejected/truck-1", denied},
		{"fleet/rejected", denied},
		{"$SYS/x", denied},
		{"$sys/x", denied}, // mochi's $SYS is case-insensitive
		{"fleet/other", 0},
		{"geofence/zone-museumsinsel/truck-1", 0}, // not this broker's prefix
		{"edgefence/late/truck-1", 0},
	} {
		if got := cl.Publish(c.topic, 1, []byte("payload of "+c.topic)); got != c.want {
			t.Errorf("anonymous publish on %s: PUBACK %#x, want %#x", c.topic, got, c.want)
		}
	}
	cl.flush()
	var topics []string
	for _, m := range observer.Sync() {
		topics = append(topics, m.Topic)
	}
	slices.Sort(topics)
	if want := []string{"edgefence/late/truck-1", "fleet/other", "geofence/zone-museumsinsel/truck-1"}; !slices.Equal(topics, want) {
		t.Errorf("observer got %q, want %q", topics, want)
	}
	cl.ping("truck-1", museumLat, museumLon, nowMs()-10_000)
	if m := observer.Next("transition"); m.Topic != "fleet/transitions/zone-museumsinsel/truck-1" {
		t.Errorf("transition on %s", m.Topic)
	}
}

// nextTransitionOnly is nextTransition skipping whatever is not on the
// transition prefix (an admin subscribed to # and $SYS/# gets all sorts).
func nextTransitionOnly(t *testing.T, cl *client5, what string) transition {
	t.Helper()
	for {
		m := cl.Next(what)
		if strings.HasPrefix(m.Topic, "geofence/") {
			return decodeTransition(t, "geofence", m)
		}
	}
}

// A device may use MQTT 5 topic aliases for its own telemetry: the ACL
// decides on the topic the alias stands for, so an alias neither blocks
// an allowed publish nor smuggles a refused one.
func TestTopicAliasesFollowTheACL(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	srv := start(t, cfg)
	dash := mustDial5(t, srv.MQTTAddr(), "wall", login("wall"))
	dash.Subscribe("geofence/#")

	r := rawDial(t, srv.MQTTAddr())
	r.mustConnect(t, "alias-truck", login("truck-1"))
	t0 := nowMs() - 30_000
	aliased := func(topic string, alias uint16, id uint16, payload []byte) byte {
		t.Helper()
		err := r.send(packets.Packet{
			FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1},
			TopicName:   topic,
			PacketID:    id,
			Payload:     payload,
			Properties:  packets.Properties{TopicAlias: alias, TopicAliasFlag: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		ack, err := r.read()
		if err != nil || ack.FixedHeader.Type != packets.Puback {
			t.Fatalf("publish %q alias %d: no PUBACK: %v", topic, alias, err)
		}
		return ack.ReasonCode
	}
	if rc := aliased("devices/truck-1/telemetry", 1, 1, canonical(museumLat, museumLon, t0)); rc != 0 {
		t.Fatalf("own telemetry, setting alias 1: PUBACK %#x", rc)
	}
	expectTransitions(t, dash, "ENTER zone-museumsinsel truck-1")
	if rc := aliased("", 1, 2, canonical(outLat, outLon, t0+1000)); rc != 0 {
		t.Errorf("own telemetry by alias 1: PUBACK %#x, want 0", rc)
	} else {
		expectTransitions(t, dash, "EXIT zone-museumsinsel truck-1")
	}
	// A refused topic cannot be given an alias, nor an alias be moved to it.
	if rc := aliased("geofence/zone-museumsinsel/truck-1", 2, 3, []byte("forged")); rc != denied {
		t.Errorf("forged transition setting alias 2: PUBACK %#x, want 0x87", rc)
	}
	if rc := aliased("devices/truck-2/telemetry", 1, 4, canonical(museumLat, museumLon, t0)); rc != denied {
		t.Errorf("another device's telemetry re-pointing alias 1: PUBACK %#x, want 0x87", rc)
	}
	if rc := aliased("", 1, 5, canonical(museumLat, museumLon, t0+2000)); rc != 0 {
		t.Errorf("alias 1 after a refused re-point: PUBACK %#x, want 0 (still its own telemetry)", rc)
	} else {
		expectTransitions(t, dash, "ENTER zone-museumsinsel truck-1")
	}
}

// Secure by default: an anonymous broker refuses to listen beyond
// loopback, and says what to do about it.
func TestAnonymousBrokerRefusesNonLoopbackListeners(t *testing.T) {
	pki := newTestPKI(t)
	for _, c := range []struct {
		name string
		set  func(*broker.Config)
	}{
		{"MQTT on all interfaces", func(c *broker.Config) { c.MQTTAddr = "0.0.0.0:0" }},
		{"MQTT on an empty host", func(c *broker.Config) { c.MQTTAddr = ":0" }},
		{"WebSocket on an empty host", func(c *broker.Config) { c.WSAddr = ":0" }},
		{"HTTP on all interfaces", func(c *broker.Config) { c.HTTPAddr = "0.0.0.0:0" }},
		{"HTTP on an empty host", func(c *broker.Config) { c.HTTPAddr = ":0" }},
		// The default --tls-addr is :8883: nothing is bound before the check.
		{"MQTTS on the default address", func(c *broker.Config) { c.TLSCert, c.TLSKey = pki.serverCert, pki.serverKey }},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			c.set(&cfg)
			srv, err := broker.Start(cfg)
			if err == nil {
				closeServer(t, srv)
				t.Fatal("an anonymous broker started beyond loopback")
			}
			if !errors.Is(err, broker.ErrExposed) || !strings.Contains(err.Error(), "--auth") || !strings.Contains(err.Error(), "--allow-anonymous") {
				t.Errorf("error %q: want broker.ErrExposed naming --auth and --allow-anonymous", err)
			}

			// AllowAnonymous or a user file lets it start.
			cfg.AllowAnonymous = true
			cfg.TLSAddr = "127.0.0.1:0" // do not take the real :8883 in a test
			srv = start(t, cfg)
			closeServer(t, srv)
			cfg.AllowAnonymous = false
			cfg.Auth = writeUsers(t, testUser{name: "ops", role: "admin", noPass: true})
			srv = start(t, cfg)
			closeServer(t, srv)
		})
	}
	// Loopback listeners need neither.
	cfg := testConfig(t)
	cfg.MQTTAddr = "localhost:0"
	cfg.WSAddr = "127.0.0.1:0"
	cfg.TLSCert, cfg.TLSKey, cfg.TLSAddr = pki.serverCert, pki.serverKey, "127.0.0.1:0"
	closeServer(t, start(t, cfg))
}
