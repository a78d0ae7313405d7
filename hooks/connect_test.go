package hooks

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/internal/mqtttest"
)

const wait = 5 * time.Second

// passwordUsers is a user file of a device and a dashboard, both with
// the password "pw".
func passwordUsers(t *testing.T) *auth.File {
	t.Helper()
	h, err := auth.HashPassword([]byte("pw"), "argon2id")
	if err != nil {
		t.Fatal(err)
	}
	f, err := auth.Parse(fmt.Appendf(nil, "users:\n  - username: truck-1\n    role: device\n    password: %q\n  - username: dash\n    role: dashboard\n    password: %q\n", h, h))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// serveMochi runs a mochi broker with hooks (in order) on a loopback TCP
// port, with the inline client, until the test ends.
func serveMochi(t *testing.T, hooks ...mqtt.Hook) (*mqtt.Server, string) {
	t.Helper()
	srv := mqtt.New(&mqtt.Options{InlineClient: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	for _, h := range hooks {
		if err := srv.AddHook(h, nil); err != nil {
			t.Fatal(err)
		}
	}
	ln := listeners.NewTCP(listeners.Config{ID: "tcp", Address: "127.0.0.1:0"})
	if err := srv.AddListener(ln); err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, ln.Address()
}

func dial(t *testing.T, addr string, cp *paho.Connect) (*mqtttest.Client, *paho.Connack, error) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatal(err)
	}
	return mqtttest.Dial(t, conn, cp, wait)
}

// willMover moves a will to another topic as it is sent: whatever could
// change a will after the CONNECT check saw it.
type willMover struct {
	mqtt.HookBase
	to   string
	sent chan packets.Packet
}

func (*willMover) ID() string { return "will-mover" }
func (*willMover) Provides(b byte) bool {
	return b == mqtt.OnWill || b == mqtt.OnWillSent
}
func (m *willMover) OnWill(_ *mqtt.Client, w mqtt.Will) (mqtt.Will, error) {
	w.TopicName = m.to
	return w, nil
}
func (m *willMover) OnWillSent(_ *mqtt.Client, pk packets.Packet) { m.sent <- pk }

// A will the ACL refuses when it is sent is dropped: mochi publishes what
// the hook returns, and that reaches no subscriber and is not retained.
func TestWillRefusedWhenSentIsDropped(t *testing.T) {
	mover := &willMover{to: "geofence/zone-museumsinsel/truck-2", sent: make(chan packets.Packet, 1)}
	srv, addr := serveMochi(t, mover, accessHook(t, passwordUsers(t)))
	got := make(chan string, 8)
	for i, f := range []string{"geofence/#", "devices/#"} {
		if err := srv.Subscribe(f, i+1, func(_ *mqtt.Client, _ packets.Subscription, pk packets.Packet) { got <- pk.TopicName }); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatal(err)
	}
	cp := &paho.Connect{ClientID: "truck-1", KeepAlive: 30, CleanStart: true,
		Username: "truck-1", UsernameFlag: true, Password: []byte("pw"), PasswordFlag: true,
		WillMessage: &paho.WillMessage{Topic: "devices/truck-1/telemetry", QoS: 1, Retain: true, Payload: []byte("forged")}}
	if _, ca, err := mqtttest.Dial(t, conn, cp, wait); err != nil {
		t.Fatalf("truck-1 with a will on its own telemetry: %v (%+v)", err, ca)
	}
	conn.Close() // no DISCONNECT: the will is sent
	select {
	case pk := <-mover.sent:
		if pk.TopicName != "" || pk.FixedHeader.Retain {
			t.Errorf("will sent on %q (retain %v), want it emptied", pk.TopicName, pk.FixedHeader.Retain)
		}
	case <-time.After(wait):
		t.Fatal("the will was not sent")
	}
	select {
	case topic := <-got:
		t.Errorf("the refused will was delivered on %q", topic)
	default:
	}
	for topic, pk := range srv.Topics.Retained.GetAll() { // mochi's $SYS topics, and nothing else
		if string(pk.Payload) == "forged" {
			t.Errorf("the refused will was retained on %q", topic)
		}
	}
}

// restoredSessions is a store that holds one session, of the dashboard.
type restoredSessions struct{ mqtt.HookBase }

func (*restoredSessions) ID() string           { return "restored-sessions" }
func (*restoredSessions) Provides(b byte) bool { return b == mqtt.StoredClients }
func (*restoredSessions) StoredClients() ([]storage.Client, error) {
	return []storage.Client{{ID: "wall", Username: []byte("dash"), ProtocolVersion: 5, Listener: "tcp",
		Properties: storage.ClientProperties{SessionExpiryInterval: 300, SessionExpiryIntervalFlag: true}}}, nil
}

// A session restored from a store at start is held for the user it was
// stored with, as it was before the restart.
func TestRestoredSessionKeepsItsUser(t *testing.T) {
	_, addr := serveMochi(t, &restoredSessions{}, accessHook(t, passwordUsers(t)))
	cp := func(user string) *paho.Connect {
		expiry := uint32(300)
		return &paho.Connect{ClientID: "wall", KeepAlive: 30, Username: user, UsernameFlag: true, Password: []byte("pw"), PasswordFlag: true,
			Properties: &paho.ConnectProperties{SessionExpiryInterval: &expiry}}
	}
	if _, ca, err := dial(t, addr, cp("truck-1")); err == nil || ca == nil || ca.ReasonCode != 0x85 {
		t.Errorf("truck-1 with the restored session's id: %v (%+v), want CONNACK 0x85", err, ca)
	}
	if _, ca, err := dial(t, addr, cp("dash")); err != nil || !ca.SessionPresent {
		t.Errorf("dash resumes its restored session: %v (%+v), want the session present", err, ca)
	}
}

// A connection taken over whose end mochi reports late, after the
// connection that took its session over has ended it, does not hold the
// id again: it is no restored session. Under load the superseded client's
// OnDisconnect came after the clean start's, and the id stayed held by
// its user for the old session's whole expiry (TestClientIDsBelongToTheirUser
// in broker/ failed so in CI). Here the late report is made by hand, after
// mochi took the session over and the clean start ended it.
func TestTakenOverConnectionEndingLateHoldsNothing(t *testing.T) {
	h := accessHook(t, passwordUsers(t))
	srv, addr := serveMochi(t, h)
	cp := func(user string, clean bool, expiry uint32) *paho.Connect {
		return &paho.Connect{ClientID: "wall", KeepAlive: 30, CleanStart: clean, Username: user, UsernameFlag: true,
			Password: []byte("pw"), PasswordFlag: true, Properties: &paho.ConnectProperties{SessionExpiryInterval: &expiry}}
	}
	if _, _, err := dial(t, addr, cp("dash", false, 300)); err != nil {
		t.Fatal(err)
	}
	old, ok := srv.Clients.Get("wall")
	if !ok {
		t.Fatal("no client wall")
	}
	clean, _, err := dial(t, addr, cp("dash", true, 0))
	if err != nil {
		t.Fatal(err)
	}
	if !old.IsTakenOver() {
		t.Fatal("mochi did not mark the first connection taken over")
	}
	if err := clean.Paho.Disconnect(&paho.Disconnect{}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, held := srv.Clients.Get("wall"); !held {
			break // the clean start's session ended
		}
		if time.Now().After(deadline) {
			t.Fatal("the clean start's session did not end")
		}
	}
	h.OnDisconnect(old, nil, false) // the superseded connection, reported late
	if _, ca, err := dial(t, addr, cp("truck-1", true, 0)); err != nil {
		t.Errorf("truck-1 with the freed id: %v (%+v), want it taken", err, ca)
	}
}
