package hooks

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
	"golang.org/x/time/rate"

	"github.com/edgefence/edgefence/auth"
)

// loginRig is an Access hook over a users file with one user, u, whose
// password is "right", and its counters.
func loginRig(t *testing.T) (*Access, *metrics.Set) {
	t.Helper()
	h, err := auth.HashPassword([]byte("right"), "argon2id")
	if err != nil {
		t.Fatal(err)
	}
	users, err := auth.Parse(fmt.Appendf(nil, "users:\n  - username: u\n    role: device\n    password: %q\n", h))
	if err != nil {
		t.Fatal(err)
	}
	a := accessHook(t, users)
	set := metrics.NewSet()
	a.CountIn(set)
	a.logins.wait = 50 * time.Millisecond
	a.logins.every = rate.Every(time.Hour) // no refill while a slow (-race) test runs
	return a, set
}

func count(t *testing.T, set *metrics.Set, name string) uint64 {
	t.Helper()
	return set.GetOrCreateCounter(name).Get()
}

// A failed login costs one verification; a source address that keeps
// failing is backed off without a hash, but the right password, once
// verified, still gets in from it.
func TestLoginOneVerificationAndBackOff(t *testing.T) {
	a, set := loginRig(t)
	const remote = "192.0.2.7:5555"
	if a.login("u", []byte("right"), remote) != packets.CodeSuccess {
		t.Fatal("the right password was refused")
	}
	for i := range backoffBurst {
		if code := a.login("u", fmt.Appendf(nil, "wrong-%d", i), remote); code != packets.ErrBadUsernameOrPassword {
			t.Fatalf("failure %d: %v, want bad username or password", i, code)
		}
	}
	if v := count(t, set, "edgefence_password_verifications_total"); v != 1+backoffBurst {
		t.Errorf("%d verifications for 1 good and %d bad logins, want one each", v, backoffBurst)
	}
	if code := a.login("nobody", []byte("x"), remote); code != packets.ErrConnectionRateExceeded {
		t.Errorf("login after %d failures: %v, want connection rate exceeded", backoffBurst, code)
	}
	if v := count(t, set, "edgefence_password_verifications_total"); v != 1+backoffBurst {
		t.Errorf("a backed-off login was verified (%d verifications)", v)
	}
	if a.login("u", []byte("right"), remote) != packets.CodeSuccess {
		t.Error("the verified password was refused from a backed-off address")
	}
	if a.login("u", []byte("wrong"), "198.51.100.1:1") != packets.ErrBadUsernameOrPassword {
		t.Error("another address was backed off too")
	}
	if v := count(t, set, `edgefence_logins_total{result="backoff"}`); v != 1 {
		t.Errorf(`edgefence_logins_total{result="backoff"} = %d, want 1`, v)
	}
}

// With every verification slot taken, a login waits, then is told the
// server is busy in its CONNACK: 0x89 for MQTT 5, 0x03 for 3.1.1, one
// CONNACK only (the hook writes it and stops the client, so mochi's own
// cannot follow).
func TestLoginBusyConnack(t *testing.T) {
	a, set := loginRig(t)
	for a.logins.slots.acquire(0, true) { // take every slot
	}
	srv := mqtt.New(&mqtt.Options{Logger: slog.New(slog.DiscardHandler)})
	for _, c := range []struct {
		version byte
		want    byte
	}{{5, 0x89}, {4, 0x03}} {
		server, client := net.Pipe()
		cl := srv.NewClient(server, "tcp", "busy", false)
		cl.Properties.ProtocolVersion = c.version
		pk := packets.Packet{ProtocolVersion: c.version}
		pk.Connect.Username, pk.Connect.Password = []byte("u"), []byte("guess")
		got := make(chan packets.Packet, 1)
		go func() {
			var fh packets.FixedHeader
			br := bufio.NewReader(client)
			b, err := br.ReadByte()
			if err == nil {
				err = fh.Decode(b)
			}
			n, _, _ := packets.DecodeLength(br)
			body := make([]byte, n)
			if _, err2 := br.Read(body); err == nil && err2 != nil {
				err = err2
			}
			pk := packets.Packet{FixedHeader: fh, ProtocolVersion: c.version}
			if err == nil {
				err = pk.ConnackDecode(body)
			}
			if err != nil {
				t.Errorf("reading the CONNACK: %v", err)
			}
			got <- pk
		}()
		if a.OnConnectAuthenticate(cl, pk) {
			t.Fatal("a busy login was admitted")
		}
		ack := <-got
		if ack.FixedHeader.Type != packets.Connack || ack.ReasonCode != c.want {
			t.Errorf("MQTT v%d busy: packet type %d reason %#x, want CONNACK %#x", c.version, ack.FixedHeader.Type, ack.ReasonCode, c.want)
		}
		if !cl.Closed() {
			t.Errorf("MQTT v%d: client not stopped after the busy CONNACK", c.version)
		}
		client.Close()
	}
	if v := count(t, set, `edgefence_logins_total{result="busy"}`); v != 2 {
		t.Errorf(`edgefence_logins_total{result="busy"} = %d, want 2`, v)
	}
	if v := count(t, set, "edgefence_password_verifications_total"); v != 0 {
		t.Errorf("%d verifications while every slot was taken", v)
	}
}

// A login of a user in good standing waits for a verification slot ahead
// of the others, which arrived before it; a user whose login failed
// lately, and a name not in the file, are not in good standing.
func TestLoginSlotsGoFirstToUsersInGoodStanding(t *testing.T) {
	a, _ := loginRig(t)
	g := a.logins
	if !g.standing("u") || g.standing("nobody") {
		t.Fatalf("standing: u %v, nobody %v; want true, false", g.standing("u"), g.standing("nobody"))
	}
	s := newVerifySlots(1)
	if !s.acquire(0, false) {
		t.Fatal("a free slot was not taken")
	}
	order := make(chan string, 2)
	rest := make(chan struct{})
	go func() {
		close(rest)
		if s.acquire(time.Minute, false) {
			order <- "rest"
			s.release()
		}
	}()
	<-rest
	for { // wait until the other login is queued
		s.mu.Lock()
		n := len(s.rest)
		s.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if s.acquire(time.Minute, true) {
			order <- "first"
			s.release()
		}
	}()
	for {
		s.mu.Lock()
		n := len(s.first)
		s.mu.Unlock()
		if n == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	s.release()
	if got := <-order; got != "first" {
		t.Errorf("the slot went to the %s login, want the one in good standing", got)
	}
	<-order
	<-done
	if code := a.login("u", []byte("wrong"), "192.0.2.9:1"); code != packets.ErrBadUsernameOrPassword {
		t.Fatalf("wrong password: %v", code)
	}
	if g.standing("u") {
		t.Error("u is in good standing right after a failed login")
	}
	if s.acquire(0, true) != true || s.acquire(0, false) {
		t.Error("slot count wrong after the waiters left")
	}
}
