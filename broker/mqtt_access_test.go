package broker_test

// MQTT access hardening of issue 31: the Home Assistant topics are the
// server's, client ids are not squatted, refused publishes do not flood
// the log, and a login flood does not turn away legitimate logins.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/mochi-mqtt/server/v2/packets"
)

// With Home Assistant discovery on at its defaults, the topics the server
// announces and updates its entities on are its own: no client, admin
// included, publishes there, and a dashboard reads them. The protection
// was computed before the defaults were filled in, and reserved "/#"
// instead (topics starting with "/"), which stays anybody's.
func TestHomeAssistantTopicsFromEffectiveConfig(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	cfg.HomeAssistant = "homeassistant"
	srv := start(t, cfg)
	admin := mustDial5(t, srv.MQTTAddr(), "ha-admin", login("ops"))
	for _, topic := range []string{
		"homeassistant/device_tracker/edgefence/truck-1/config",
		"homeassistant/sensor/edgefence/zone-museumsinsel/config",
		"homeassistant/binary_sensor/edgefence/in_truck-1_xzone-museumsinsel/config",
		"edgefence/ha/status",
		"edgefence/ha/truck-1/state",
	} {
		if rc := admin.Publish(topic, 1, []byte("forged")); rc != denied {
			t.Errorf("admin publishes on the server's %s: PUBACK %#x, want %#x", topic, rc, denied)
		}
	}
	for _, topic := range []string{"/x", "/", "foo/bar", "homeassistant/device_tracker/other-node/x/config"} {
		if rc := admin.Publish(topic, 1, []byte("fine")); rc != 0 {
			t.Errorf("admin publishes on %s, not the server's: PUBACK %#x, want 0", topic, rc)
		}
	}
	wall := mustDial5(t, srv.MQTTAddr(), "ha-wall", login("wall"))
	// One SUBSCRIBE: the retained messages of a first would be in flight,
	// and mochi refuses a later SUBSCRIBE reusing one of their packet ids
	// (0x91).
	filters := map[string]byte{
		"homeassistant/device_tracker/edgefence/#": granted,
		"homeassistant/sensor/edgefence/+/config":  granted,
		"homeassistant/binary_sensor/edgefence/#":  granted,
		"edgefence/ha/#": granted,
		"/#":             denied, // not the server's
	}
	sub := &paho.Subscribe{}
	for f := range filters {
		sub.Subscriptions = append(sub.Subscriptions, paho.SubscribeOptions{Topic: f, QoS: 1})
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	sa, err := wall.Paho.Subscribe(ctx, sub)
	if sa == nil || len(sa.Reasons) != len(sub.Subscriptions) { // err: one was refused
		t.Fatalf("dashboard subscribes: %v (%+v)", err, sa)
	}
	for i, s := range sub.Subscriptions {
		if rc := sa.Reasons[i]; rc != filters[s.Topic] {
			t.Errorf("dashboard subscribes %s: SUBACK %#x, want %#x", s.Topic, rc, filters[s.Topic])
		}
	}
	// What the dashboard subscribed to comes, the server's availability
	// among the retained entities.
	for {
		m := wall.Next("the retained availability on edgefence/ha/status")
		if m.Topic == "edgefence/ha/status" {
			if string(m.Payload) != "online" {
				t.Errorf("dashboard got availability %q, want online", m.Payload)
			}
			break
		}
	}
}

// A device publishing at QoS 1 over MQTT 3.1.1 on a topic it may not is
// disconnected (3.1.1 has no way to say "not authorised"), and such a
// device reconnects and tries again: 5 s of that with 3 KB payloads, from
// 4 connections at once, must not flood the log (mochi logged each refused
// packet whole: 118 MB in 5 s). Each refusal is counted; the log names the
// client, topic and reason, at most once a second, and never the payload.
func TestRefusedPublishesDoNotFloodTheLog(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "edgefence.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logFile.Close() }) // after the server's close (cleanups run last first)
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	cfg.Log = slog.New(slog.NewTextHandler(logFile, nil))
	srv := start(t, cfg)
	addr := srv.MQTTAddr()
	// Log in once: the password is cached, as a reconnecting device's is.
	mustDial5(t, addr, "warm", login("truck-1")).Paho.Disconnect(&paho.Disconnect{})

	const topic = "devices/truck-2/telemetry" // another device's
	payload := bytes.Repeat([]byte("SECRET-PAYLOAD-"), 3<<10/15)
	pub, err := encodePacket(4, publishPacket(1, 1, topic, payload))
	if err != nil {
		t.Fatal(err)
	}
	before, err := logFile.Stat()
	if err != nil {
		t.Fatal(err)
	}
	var refused atomic.Int64
	deadline := time.Now().Add(5 * time.Second)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				conn, err := net.DialTimeout("tcp", addr, wait)
				if err != nil {
					t.Errorf("dial: %v", err)
					return
				}
				rc, err := connect311(conn, connectPacket(fmt.Sprintf("flooder-%d", i), login("truck-1"), 30))
				if err == nil && rc == 0 {
					_, err = conn.Write(pub)
				}
				if err == nil {
					// Refused: the server closes the connection.
					_ = conn.SetReadDeadline(time.Now().Add(wait))
					if _, rerr := io.Copy(io.Discard, conn); rerr == nil {
						refused.Add(1)
					}
				}
				conn.Close()
			}
		}()
	}
	wg.Wait()
	after, err := logFile.Stat()
	if err != nil {
		t.Fatal(err)
	}
	growth := after.Size() - before.Size()
	t.Logf("%d refused 3 KB publishes in 5 s, log grew %d bytes", refused.Load(), growth)
	if refused.Load() < 20 {
		t.Fatalf("only %d refused publishes in 5 s: the test did not flood", refused.Load())
	}
	if growth >= 100<<10 {
		t.Errorf("log grew %d bytes in 5 s of refused publishes, want under 100 KB", growth)
	}
	waitMetric(t, srv, `edgefence_publishes_not_authorized_total`, float64(refused.Load()))
	logged, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(logged, []byte("SECRET-PAYLOAD")) {
		t.Error("the log holds the refused payload")
	}
	var named bool
	for _, line := range strings.Split(string(logged), "\n") {
		if strings.Contains(line, "client=flooder-") && strings.Contains(line, "topic="+topic) && strings.Contains(line, "not authorized") {
			named = true
		}
	}
	if !named {
		t.Errorf("no log line names the client, topic and reason of the refusals:\n%.2000s", logged)
	}
}

// A user who takes a fixed client id first and keeps a session holds it
// against every other user, but not for ever: the session, and with it
// the claim, ends at most --max-session-expiry after the connection
// (1 h by default), whatever expiry the client asked for, MQTT 5 or 3.1.1.
// Squatting another client's id locked its owner out until a restart.
// The owner then starts afresh: it never gets the squatter's session.
func TestSquattedClientIDIsFreedWhenTheClaimExpires(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	cfg.MaxSessionExpiry = 2 * time.Second
	srv := start(t, cfg)
	addr := srv.MQTTAddr()
	for _, v := range versions {
		id := "wall-display-" + v.name // the dashboard's usual id
		// truck-2 squats it with a session it asks to keep for a day.
		squat := dialRaw(t, addr, v.v)
		ack := squat.connect(id, login("truck-2"), 30, func(pk *packets.Packet) {
			pk.Connect.Clean = false
			pk.Properties.SessionExpiryInterval, pk.Properties.SessionExpiryIntervalFlag = 86400, true
		})
		if ack.ReasonCode != 0 {
			t.Fatalf("%s: truck-2 takes the free id %s: CONNACK %#x", v.name, id, ack.ReasonCode)
		}
		if v.v == 5 && (!ack.Properties.SessionExpiryIntervalFlag || ack.Properties.SessionExpiryInterval != 2) {
			t.Errorf("%s: CONNACK session expiry %d (set %v), want the server's 2 s", v.name,
				ack.Properties.SessionExpiryInterval, ack.Properties.SessionExpiryIntervalFlag)
		}
		// Subscribed as itself, so that a session handed over would show.
		squat.subscribe(1, "geofence/+/truck-2")
		if err := squat.send(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Disconnect}}); err != nil {
			t.Fatal(err)
		}
		squat.closed("squatter's DISCONNECT")

		// While the session is kept, the id is truck-2's: wall is refused.
		if _, ca, err := session5(t, dialTCP(t, addr), id, login("wall"), false, 300); err == nil || ca == nil || ca.ReasonCode != 0x85 {
			t.Errorf("%s: wall with the squatted id, session kept: %v (%+v), want CONNACK 0x85", v.name, err, ca)
		}
		// Then the session expires, and the claim with it.
		deadline := time.Now().Add(2 * wait)
		for {
			wall, ca, err := session5(t, dialTCP(t, addr), id, login("wall"), false, 300)
			if err == nil {
				if ca.SessionPresent {
					t.Errorf("%s: wall got truck-2's session with the id", v.name)
				}
				_ = wall.Paho.Disconnect(&paho.Disconnect{})
				break
			}
			if ca == nil || ca.ReasonCode != 0x85 {
				t.Fatalf("%s: wall with the id: %v (%+v), want 0x85 until the claim expires", v.name, err, ca)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the id is still truck-2's %v after its connection ended", v.name, 2*wait)
			}
			time.Sleep(200 * time.Millisecond)
		}
		// wall's own kept session is now wall's: truck-2 cannot take it.
		for _, clean := range []bool{true, false} {
			if _, ca, err := session5(t, dialTCP(t, addr), id, login("truck-2"), clean, 300); err == nil || ca == nil || ca.ReasonCode != 0x85 {
				t.Errorf("%s: truck-2 (clean %v) takes wall's session: %v (%+v), want CONNACK 0x85", v.name, clean, err, ca)
			}
		}
	}
}

// With --strict-client-ids a device's name is its own client id: no other
// user, a dashboard or an admin included, may connect with it, or with
// "name/…", even while the device is away; the device always may.
func TestStrictClientIDsAreTheDevicesOwn(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	cfg.StrictClientIDs = true
	srv := start(t, cfg)
	addr := srv.MQTTAddr()
	for _, user := range []string{"wall", "ops", "truck-1"} {
		for _, id := range []string{"truck-2", "truck-2/cab"} {
			if _, ca, err := session5(t, dialTCP(t, addr), id, login(user), false, 300); err == nil || ca == nil || ca.ReasonCode != 0x85 {
				t.Errorf("%s connects with device truck-2's id %s: %v (%+v), want CONNACK 0x85", user, id, err, ca)
			}
			conn := dialTCP(t, addr)
			pk := connectPacket(id, login(user), 30)
			pk.Connect.Clean = false
			if rc, err := connect311(conn, pk); err != nil || rc != 0x02 {
				t.Errorf("3.1.1 %s with device truck-2's id %s: CONNACK %#x (%v), want 0x02", user, id, rc, err)
			}
			conn.Close()
		}
	}
	truck, ca, err := session5(t, dialTCP(t, addr), "truck-2", login("truck-2"), false, 300)
	if err != nil {
		t.Fatalf("truck-2 with its own id: %v (%+v)", err, ca)
	}
	if ca.SessionPresent {
		t.Error("truck-2 got a session another user left under its id")
	}
	_ = truck.Paho.Disconnect(&paho.Disconnect{})
	// Ids that are no device's stay first come, first served.
	wall, ca, err := session5(t, dialTCP(t, addr), "wall-display", login("wall"), false, 300)
	if err != nil {
		t.Fatalf("wall with an id of no device: %v (%+v)", err, ca)
	}
	_ = wall.Paho.Disconnect(&paho.Disconnect{})
}

// A flood of bogus logins spread over 40 addresses (each within its
// back-off allowance) keeps the verification slots busy; logins of users
// in the file whose logins have not been failing go ahead of it, so 5
// cold legitimate logins (their passwords not verified yet) arriving
// during the flood all get in. They were turned away with 0x89 server
// busy, waiting behind the flood.
func TestColdLoginsGetInDuringALoginFlood(t *testing.T) {
	users := slices.Clone(aclUsers)
	for i := range 5 {
		users = append(users, testUser{name: fmt.Sprintf("fleet-%d", i), role: "device"})
	}
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, users...)
	srv := start(t, cfg)
	addr := srv.MQTTAddr()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var floodAcks sync.Map // CONNACK reason -> *atomic.Int64
	for a := range 40 {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+a))}
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := net.Dialer{LocalAddr: local, Timeout: wait}
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					conn, err := d.Dial("tcp", addr)
					if err != nil {
						t.Errorf("flood from %v: %v", local, err)
						return
					}
					r := &rawClient{conn: conn, br: bufio.NewReader(conn)}
					rc, err := r.connect(fmt.Sprintf("bogus-%d-%d-%d", a, g, n), creds{user: fmt.Sprintf("bogus-%d", n%7), pass: "guess"}, 30)
					conn.Close()
					if err == nil {
						c, _ := floodAcks.LoadOrStore(rc, new(atomic.Int64))
						c.(*atomic.Int64).Add(1)
					}
				}
			}()
		}
	}
	defer func() {
		close(stop)
		wg.Wait()
		floodAcks.Range(func(k, v any) bool {
			t.Logf("bogus logins answered %#x: %d", k, v.(*atomic.Int64).Load())
			return true
		})
	}()
	// The flood fills the slots: logins are told the server is busy.
	deadline := time.Now().Add(2 * wait)
	for metric(t, srv, `edgefence_logins_total{result="busy"}`) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no login told the server is busy within %v of flooding", 2*wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := range 5 {
		name := fmt.Sprintf("fleet-%d", i)
		cl, ca, err := dialMQTT5(t, dialTCP(t, addr), name, login(name))
		if err != nil {
			t.Errorf("cold login of %s during the flood: %v (%+v), want accepted", name, err, ca)
			continue
		}
		_ = cl.Paho.Disconnect(&paho.Disconnect{})
	}
}
