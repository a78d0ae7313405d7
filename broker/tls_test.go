package broker_test

import (
	"crypto/tls"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/broker"
)

// tlsBroker starts a broker with the ACL users, MQTTS and wss on free
// loopback ports, and client certificates verified against the test CA.
func tlsBroker(t *testing.T) (*broker.Server, *testPKI) {
	t.Helper()
	pki := newTestPKI(t)
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	cfg.TLSCert, cfg.TLSKey, cfg.TLSClientCA = pki.serverCert, pki.serverKey, pki.caCert
	cfg.TLSAddr = "127.0.0.1:0"
	cfg.WSAddr = "127.0.0.1:0"
	return start(t, cfg), pki
}

// MQTTS with a password, mutual TLS with a certificate as the only
// credential, and the refusals: a certificate naming no user, a name
// beside the certificate that is not its CN, a certificate of another CA.
func TestMQTTSAndMutualTLS(t *testing.T) {
	srv, pki := tlsBroker(t)
	addr := srv.TLSAddr()

	tlsConn := func(certs ...tls.Certificate) net.Conn {
		t.Helper()
		c, err := dialTLS(addr, pki.tlsConfig(certs...))
		if err != nil {
			t.Fatalf("TLS dial %s: %v", addr, err)
		}
		return c
	}

	// A dashboard over MQTTS with a password and no certificate.
	dash, ca, err := dialMQTT5(t, tlsConn(), "wall-tls", login("wall"))
	if err != nil {
		t.Fatalf("MQTTS with password: %v (%+v)", err, ca)
	}
	dash.Subscribe("geofence/#")

	// gateway-7 has no password: its certificate is its login, and it is
	// a device like any other.
	gw, ca, err := dialMQTT5(t, tlsConn(pki.client(t, "gateway-7", false)), "gateway-7", anonymous)
	if err != nil {
		t.Fatalf("mutual TLS as gateway-7: %v (%+v)", err, ca)
	}
	t0 := nowMs() - 30_000
	gw.ping("gateway-7", museumLat, museumLon, t0)
	expectTransitions(t, dash, "ENTER zone-museumsinsel gateway-7")
	if rc := gw.Publish("devices/truck-1/telemetry", 1, canonical(museumLat, museumLon, t0)); rc != denied {
		t.Errorf("gateway-7 publishes truck-1's telemetry: PUBACK %#x, want 0x87", rc)
	}
	if rc := gw.subscribeRC("geofence/#"); rc != denied {
		t.Errorf("gateway-7 subscribes geofence/#: SUBACK %#x, want 0x87", rc)
	}

	// The certificate's name may be repeated as the username.
	if _, ca, err := dialMQTT5(t, tlsConn(pki.client(t, "gateway-7", false)), "gateway-7-named", creds{user: "gateway-7"}); err != nil {
		t.Errorf("mutual TLS as gateway-7 with username gateway-7: %v (%+v)", err, ca)
	}
	// A certificate and a password user of another name: refused, the
	// password notwithstanding (no privilege from the certificate's
	// connection, none from the name).
	if rc := refused5(t, tlsConn(pki.client(t, "gateway-7", false)), "gateway-7-as-ops", login("ops")); rc != 0x86 {
		t.Errorf("certificate gateway-7 with username ops: CONNACK %#x, want 0x86", rc)
	}
	// A valid certificate naming nobody in the user file.
	if rc := refused5(t, tlsConn(pki.client(t, "stranger", false)), "stranger", anonymous); rc != 0x86 {
		t.Errorf("certificate of an unknown CN: CONNACK %#x, want 0x86", rc)
	}
	// Without a certificate, a certificate-only user cannot log in at all.
	if rc := refused5(t, tlsConn(), "gateway-7-nocert", creds{"gateway-7", secret}); rc != 0x86 {
		t.Errorf("gateway-7 without certificate: CONNACK %#x, want 0x86", rc)
	}
	// Nor over plain TCP, where a username is all there is.
	if rc := refused5(t, dialTCP(t, srv.MQTTAddr()), "gateway-7-tcp", creds{user: "gateway-7"}); rc != 0x86 {
		t.Errorf("gateway-7 over TCP: CONNACK %#x, want 0x86", rc)
	}

	// A certificate the broker's CA did not sign fails the handshake. (A
	// Go client would not even send it, the server's CA not being its
	// issuer: GetClientCertificate forces it.) With TLS 1.3 the client
	// finishes its side first and reads the alert.
	foreign := pki.client(t, "gateway-7", true)
	tc := pki.tlsConfig()
	tc.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &foreign, nil }
	c, err := dialTLS(addr, tc)
	if err == nil {
		defer c.Close()
		_ = c.SetReadDeadline(time.Now().Add(wait))
		_, err = c.Read(make([]byte, 1))
	}
	if err == nil || !strings.Contains(err.Error(), "remote error: tls: ") {
		t.Errorf("certificate of another CA: %v, want a TLS alert", err)
	}
	// The Go client's own choice, sending no certificate, leaves it
	// without credentials.
	if rc := refused5(t, tlsConn(foreign), "gateway-7-foreign", anonymous); rc != 0x86 {
		t.Errorf("certificate of another CA, not sent: CONNACK %#x, want 0x86", rc)
	}
	// A client that does not trust the server's certificate refuses it.
	if c, err := dialTLS(addr, &tls.Config{MinVersion: tls.VersionTLS12}); err == nil {
		c.Close()
		t.Error("client without the test CA accepted the server's certificate")
	}
}

// Browser dashboards speak MQTT over WebSocket (subprotocol mqtt, any
// path): a ws subscriber gets the transition of a ping sent over TCP.
func TestWebSocketSubscriberGetsTransitions(t *testing.T) {
	cfg := testConfig(t)
	cfg.WSAddr = "127.0.0.1:0"
	srv := start(t, cfg)

	conn, err := dialWS("ws://"+srv.WSAddr()+"/", nil)
	if err != nil {
		t.Fatalf("websocket dial: %v", err)
	}
	dash, ca, err := dialMQTT5(t, conn, "ws-dashboard", anonymous)
	if err != nil {
		t.Fatalf("MQTT over WebSocket: %v (%+v)", err, ca)
	}
	dash.Subscribe("geofence/#")
	tracker := connect5(t, srv.MQTTAddr(), "tcp-tracker")
	t0 := nowMs() - 30_000
	tracker.ping("ws-1", museumLat, museumLon, t0)
	expectTransitions(t, dash, "ENTER zone-museumsinsel ws-1")
	// Many packets in quick succession, split and joined across messages.
	for i := range 20 {
		lat := museumLat
		if i%2 == 0 {
			lat = outLat
		}
		tracker.ping("ws-1", lat, outLon+0.1*float64(i%2), t0+int64(i+1)*1000)
	}
	for i := range 20 {
		want := "ENTER zone-museumsinsel ws-1"
		if i%2 == 0 {
			want = "EXIT zone-museumsinsel ws-1"
		}
		expectTransitions(t, dash, want)
	}
	// A tracker may publish over WebSocket as well.
	wsTracker, _, err := dialMQTT5(t, mustWS(t, "ws://"+srv.WSAddr()+"/mqtt", nil), "ws-tracker", anonymous)
	if err != nil {
		t.Fatal(err)
	}
	wsTracker.ping("ws-2", alexLat, alexLon, t0)
	expectTransitions(t, dash, "ENTER customer-alex ws-2")
}

func mustWS(t *testing.T, url string, tc *tls.Config) net.Conn {
	t.Helper()
	c, err := dialWS(url, tc)
	if err != nil {
		t.Fatalf("websocket dial %s: %v", url, err)
	}
	return c
}

// With TLS configured the WebSocket listener is wss: a password login
// and a client-certificate login both work, as on MQTTS.
func TestSecureWebSocket(t *testing.T) {
	srv, pki := tlsBroker(t)
	url := "wss://" + srv.WSAddr() + "/mqtt"

	dash, ca, err := dialMQTT5(t, mustWS(t, url, pki.tlsConfig()), "wss-wall", login("wall"))
	if err != nil {
		t.Fatalf("wss with password: %v (%+v)", err, ca)
	}
	dash.Subscribe("geofence/#")

	gw, ca, err := dialMQTT5(t, mustWS(t, url, pki.tlsConfig(pki.client(t, "gateway-7", false))), "wss-gateway-7", anonymous)
	if err != nil {
		t.Fatalf("wss with the certificate of gateway-7: %v (%+v)", err, ca)
	}
	gw.ping("gateway-7", museumLat, museumLon, nowMs()-30_000)
	expectTransitions(t, dash, "ENTER zone-museumsinsel gateway-7")

	if rc := refused5(t, mustWS(t, url, pki.tlsConfig(pki.client(t, "stranger", false))), "wss-stranger", anonymous); rc != 0x86 {
		t.Errorf("wss certificate of an unknown CN: CONNACK %#x, want 0x86", rc)
	}
	// Plain ws to the wss port fails.
	if c, err := dialWS("ws://"+srv.WSAddr()+"/mqtt", nil); err == nil {
		c.Close()
		t.Error("plain ws accepted on the wss listener")
	}
}
