package broker_test

// Helpers of the security, limit and garbage tests: user files with real
// hashes, MQTT 5 clients over any net.Conn with credentials, a raw MQTT 5
// byte-level client, test certificates, and a WebSocket net.Conn.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/gorilla/websocket"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/internal/mqtttest"
)

// secret is every password-holding test user's password.
const secret = "s3cret-pass"

var (
	secretHashOnce sync.Once
	secretHash     string
	secretHashErr  error
)

// secretHashed is an argon2id hash of secret at the production cost, made
// once per test binary with auth.HashPassword (about 0.25 s under -race;
// bcrypt at cost 12 takes seconds). Users share it: the login cache is per
// user, so each user's first login still runs the full hash.
func secretHashed(t *testing.T) string {
	t.Helper()
	secretHashOnce.Do(func() { secretHash, secretHashErr = auth.HashPassword([]byte(secret), "argon2id") })
	if secretHashErr != nil {
		t.Fatalf("auth.HashPassword: %v", secretHashErr)
	}
	return secretHash
}

// testUser is one entry of a test user file.
type testUser struct {
	name    string
	role    string
	readOwn bool
	noPass  bool // certificate-only
}

// scraper is the admin user every test user file has, as whom metrics()
// reads /metrics (with --auth it needs an admin).
const scraper = "scraper"

// writeUsers writes a user file with the given users, every one with a
// password but noPass ones, and the admin scraper, and returns its path.
func writeUsers(t *testing.T, users ...testUser) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("users:\n")
	for _, u := range append(users, testUser{name: scraper, role: "admin"}) {
		fmt.Fprintf(&b, "  - username: %s\n    role: %s\n", u.name, u.role)
		if !u.noPass {
			fmt.Fprintf(&b, "    password: %q\n", secretHashed(t))
		}
		if u.readOwn {
			b.WriteString("    read_own_transitions: true\n")
		}
	}
	path := filepath.Join(t.TempDir(), "users.yaml")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// creds are what a client presents in CONNECT; zero: no username, no password.
type creds struct {
	user, pass string
}

var anonymous creds

func login(user string) creds { return creds{user: user, pass: secret} }

// dialMQTT5 connects a paho.golang MQTT 5 client over conn. On success the
// client is disconnected when the test ends; on failure conn is closed and
// the CONNACK (if one came) and error are returned.
func dialMQTT5(t *testing.T, conn net.Conn, name string, cr creds) (*client5, *paho.Connack, error) {
	t.Helper()
	cp := &paho.Connect{ClientID: mqtttest.ID(name), KeepAlive: 30, CleanStart: true}
	if cr.user != "" {
		cp.Username, cp.UsernameFlag = cr.user, true
	}
	if cr.pass != "" {
		cp.Password, cp.PasswordFlag = []byte(cr.pass), true
	}
	cl, ca, err := mqtttest.Dial(t, conn, cp, wait)
	if err != nil {
		return nil, ca, err
	}
	cl.RetainAsPublished = true
	return &client5{cl}, ca, nil
}

// mustDial5 dials TCP and connects, failing the test on any refusal.
func mustDial5(t *testing.T, addr, name string, cr creds) *client5 {
	t.Helper()
	cl, ca, err := dialMQTT5(t, dialTCP(t, addr), name, cr)
	if err != nil {
		t.Fatalf("connect %s as %q: %v (%+v)", name, cr.user, err, ca)
	}
	return cl
}

// refused5 dials TCP, connects and returns the CONNACK reason of a refusal,
// failing the test if the connection is accepted.
func refused5(t *testing.T, conn net.Conn, name string, cr creds) byte {
	t.Helper()
	cl, ca, err := dialMQTT5(t, conn, name, cr)
	if err == nil {
		_ = cl.Paho.Disconnect(&paho.Disconnect{})
		t.Fatalf("%s: connected as %q, want a refusal", name, cr.user)
	}
	if ca == nil {
		t.Fatalf("%s: no CONNACK: %v", name, err)
	}
	return ca.ReasonCode
}

func dialTCP(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	return conn
}

// subscribeRC subscribes to one filter at QoS 1 and returns the SUBACK
// reason code (0x00/0x01 granted, >= 0x80 refused).
func (cl *client5) subscribeRC(filter string) byte {
	cl.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	sa, err := cl.Paho.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}})
	if sa == nil || len(sa.Reasons) != 1 {
		cl.T.Fatalf("subscribe %s: no SUBACK: %v", filter, err)
	}
	return sa.Reasons[0]
}

// ---- raw MQTT 5 over a socket, for garbage and for many cheap devices ----

// rawClient speaks MQTT 5 byte by byte with mochi's packet codec: one
// socket, no goroutine, every call synchronous.
type rawClient struct {
	conn net.Conn
	br   *bufio.Reader
}

func rawDial(t *testing.T, addr string) *rawClient {
	t.Helper()
	c := dialTCP(t, addr)
	t.Cleanup(func() { c.Close() })
	return &rawClient{conn: c, br: bufio.NewReader(c)}
}

func (r *rawClient) write(b []byte) error {
	_ = r.conn.SetWriteDeadline(time.Now().Add(wait))
	_, err := r.conn.Write(b)
	return err
}

// send encodes and writes a packet (MQTT 5).
func (r *rawClient) send(pk packets.Packet) error {
	b, err := encodePacket(5, pk)
	if err != nil {
		return err
	}
	return r.write(b)
}

// encodePacket encodes pk as a client of protocol version v sends it.
func encodePacket(v byte, pk packets.Packet) ([]byte, error) {
	pk.ProtocolVersion = v
	var buf bytes.Buffer
	var err error
	switch pk.FixedHeader.Type {
	case packets.Connect:
		err = pk.ConnectEncode(&buf)
	case packets.Publish:
		err = pk.PublishEncode(&buf)
	case packets.Pubrel:
		err = pk.PubrelEncode(&buf)
	case packets.Puback:
		err = pk.PubackEncode(&buf)
	case packets.Subscribe:
		err = pk.SubscribeEncode(&buf)
	case packets.Pingreq:
		err = pk.PingreqEncode(&buf)
	case packets.Disconnect:
		err = pk.DisconnectEncode(&buf)
	default:
		return nil, fmt.Errorf("cannot encode packet type %d", pk.FixedHeader.Type)
	}
	return buf.Bytes(), err
}

// read reads the next packet, waiting at most wait.
func (r *rawClient) read() (packets.Packet, error) {
	_ = r.conn.SetReadDeadline(time.Now().Add(wait))
	return r.readNoDeadline()
}

// readNoDeadline reads the next packet under the deadline already set.
func (r *rawClient) readNoDeadline() (packets.Packet, error) { return readPacket(r.br, 5) }

// readPacket reads and decodes the next packet a broker sends a client
// speaking protocol version v.
func readPacket(br *bufio.Reader, v byte) (packets.Packet, error) {
	var pk packets.Packet
	b, err := br.ReadByte()
	if err != nil {
		return pk, err
	}
	if err := pk.FixedHeader.Decode(b); err != nil {
		return pk, err
	}
	n, _, err := packets.DecodeLength(br)
	if err != nil {
		return pk, err
	}
	pk.FixedHeader.Remaining = n
	body := make([]byte, n)
	if _, err := io.ReadFull(br, body); err != nil {
		return pk, err
	}
	pk.ProtocolVersion = v
	switch pk.FixedHeader.Type {
	case packets.Connack:
		err = pk.ConnackDecode(body)
	case packets.Puback:
		err = pk.PubackDecode(body)
	case packets.Pubrec:
		err = pk.PubrecDecode(body)
	case packets.Pubcomp:
		err = pk.PubcompDecode(body)
	case packets.Suback:
		err = pk.SubackDecode(body)
	case packets.Unsuback:
		err = pk.UnsubackDecode(body)
	case packets.Disconnect:
		err = pk.DisconnectDecode(body)
	case packets.Publish:
		err = pk.PublishDecode(body)
	}
	return pk, err
}

// connectPacket is a clean-session CONNECT logging in with cr; the
// encoder names the protocol unless ProtocolName is set.
func connectPacket(id string, cr creds, keepalive uint16) packets.Packet {
	pk := packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Connect},
		Connect: packets.ConnectParams{
			ClientIdentifier: id,
			Clean:            true,
			Keepalive:        keepalive,
		},
	}
	if cr.user != "" {
		pk.Connect.Username, pk.Connect.UsernameFlag = []byte(cr.user), true
	}
	if cr.pass != "" {
		pk.Connect.Password, pk.Connect.PasswordFlag = []byte(cr.pass), true
	}
	return pk
}

// connect sends CONNECT and returns the CONNACK's reason code.
func (r *rawClient) connect(id string, cr creds, keepalive uint16) (byte, error) {
	pk := connectPacket(id, cr, keepalive)
	pk.Connect.ProtocolName = []byte("MQTT")
	if err := r.send(pk); err != nil {
		return 0, err
	}
	ack, err := r.read()
	if err != nil {
		return 0, err
	}
	if ack.FixedHeader.Type != packets.Connack {
		return 0, fmt.Errorf("got packet type %d, want CONNACK", ack.FixedHeader.Type)
	}
	return ack.ReasonCode, nil
}

func (r *rawClient) mustConnect(t *testing.T, id string, cr creds) {
	t.Helper()
	if rc, err := r.connect(id, cr, 30); err != nil || rc != 0 {
		t.Fatalf("raw connect %s: reason %#x, %v", id, rc, err)
	}
}

// publish1 publishes at QoS 1 and returns the PUBACK reason code.
func (r *rawClient) publish1(topic string, id uint16, payload []byte) (byte, error) {
	err := r.send(packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1},
		TopicName:   topic,
		PacketID:    id,
		Payload:     payload,
	})
	if err != nil {
		return 0, err
	}
	ack, err := r.read()
	if err != nil {
		return 0, err
	}
	if ack.FixedHeader.Type != packets.Puback || ack.PacketID != id {
		return 0, fmt.Errorf("got packet type %d id %d, want PUBACK %d", ack.FixedHeader.Type, ack.PacketID, id)
	}
	return ack.ReasonCode, nil
}

// closedByServer reads until the server closes the socket, and returns
// how long that took and what it read; it fails the test if the socket is
// still open after limit.
func (r *rawClient) closedByServer(t *testing.T, what string, limit time.Duration) (time.Duration, []byte) {
	t.Helper()
	t0 := time.Now()
	_ = r.conn.SetReadDeadline(t0.Add(limit))
	var got bytes.Buffer
	_, err := io.Copy(&got, r.br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: server did not close the connection within %v", what, limit)
	}
	return time.Since(t0), got.Bytes() // err nil (EOF) or a reset: closed either way
}

// ---- certificates ----

// testPKI is a CA, a server certificate for 127.0.0.1 and client
// certificates, as PEM files in a temp dir.
type testPKI struct {
	dir              string
	caCert           string // PEM files
	serverCert       string
	serverKey        string
	pool             *x509.CertPool // trusts the CA
	ca               *x509.Certificate
	caPriv           *ecdsa.PrivateKey
	otherCA          *x509.Certificate
	otherCAPriv      *ecdsa.PrivateKey
	serial           int64
	clientCertsCache map[string]tls.Certificate
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	p := &testPKI{dir: t.TempDir(), pool: x509.NewCertPool(), clientCertsCache: map[string]tls.Certificate{}}
	p.ca, p.caPriv = p.makeCA(t, "edgefence test CA")
	p.otherCA, p.otherCAPriv = p.makeCA(t, "some other CA")
	p.pool.AddCert(p.ca)
	p.caCert = p.writePEM(t, "ca.pem", "CERTIFICATE", p.ca.Raw)
	cert, key := p.issue(t, p.ca, p.caPriv, "127.0.0.1", true)
	p.serverCert = p.writePEM(t, "server.pem", "CERTIFICATE", cert.Certificate[0])
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p.serverKey = p.writePEM(t, "server-key.pem", "EC PRIVATE KEY", der)
	return p
}

func (p *testPKI) makeCA(t *testing.T, cn string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(p.serial),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// issue makes a leaf certificate signed by ca: a server certificate for
// the IP cn, or a client certificate with common name cn.
func (p *testPKI) issue(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, server bool) (tls.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP(cn)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, key
}

// client returns a client certificate with common name cn, signed by the
// test CA or, with other, by a CA the broker does not trust.
func (p *testPKI) client(t *testing.T, cn string, other bool) tls.Certificate {
	t.Helper()
	k := fmt.Sprint(cn, other)
	if c, ok := p.clientCertsCache[k]; ok {
		return c
	}
	ca, key := p.ca, p.caPriv
	if other {
		ca, key = p.otherCA, p.otherCAPriv
	}
	c, _ := p.issue(t, ca, key, cn, false)
	p.clientCertsCache[k] = c
	return c
}

func (p *testPKI) writePEM(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// tlsConfig is a client configuration trusting the test CA, presenting
// certs (none, or one client certificate).
func (p *testPKI) tlsConfig(certs ...tls.Certificate) *tls.Config {
	return &tls.Config{RootCAs: p.pool, Certificates: certs, MinVersion: tls.VersionTLS12}
}

// dialTLS dials addr over TLS and completes the client side of the
// handshake.
func dialTLS(addr string, tc *tls.Config) (*tls.Conn, error) {
	return tls.DialWithDialer(&net.Dialer{Timeout: wait}, "tcp", addr, tc)
}

// ---- WebSocket ----

// wsNetConn is an MQTT byte stream over a gorilla WebSocket: what a
// browser dashboard's MQTT library does. Each Write is one binary message.
type wsNetConn struct {
	ws *websocket.Conn
	r  io.Reader
	mu sync.Mutex // paho writes from several goroutines
}

var _ net.Conn = (*wsNetConn)(nil)

// dialWS opens a WebSocket with subprotocol mqtt to url (ws:// or wss://).
func dialWS(url string, tc *tls.Config) (*wsNetConn, error) {
	d := websocket.Dialer{Subprotocols: []string{"mqtt"}, HandshakeTimeout: wait, TLSClientConfig: tc}
	ws, resp, err := d.Dial(url, nil)
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	if err != nil {
		return nil, err
	}
	if ws.Subprotocol() != "mqtt" {
		ws.Close()
		return nil, fmt.Errorf("server chose subprotocol %q, want mqtt", ws.Subprotocol())
	}
	return &wsNetConn{ws: ws}, nil
}

func (c *wsNetConn) Read(p []byte) (int, error) {
	for {
		if c.r == nil {
			typ, r, err := c.ws.NextReader()
			if err != nil {
				return 0, err
			}
			if typ != websocket.BinaryMessage {
				return 0, fmt.Errorf("websocket message type %d, want binary", typ)
			}
			c.r = r
		}
		n, err := c.r.Read(p)
		if errors.Is(err, io.EOF) {
			c.r, err = nil, nil
			if n == 0 {
				continue
			}
		}
		return n, err
	}
}

func (c *wsNetConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.ws.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *wsNetConn) Close() error                       { return c.ws.Close() }
func (c *wsNetConn) LocalAddr() net.Addr                { return c.ws.LocalAddr() }
func (c *wsNetConn) RemoteAddr() net.Addr               { return c.ws.RemoteAddr() }
func (c *wsNetConn) SetReadDeadline(t time.Time) error  { return c.ws.SetReadDeadline(t) }
func (c *wsNetConn) SetWriteDeadline(t time.Time) error { return c.ws.SetWriteDeadline(t) }
func (c *wsNetConn) SetDeadline(t time.Time) error {
	return errors.Join(c.ws.SetReadDeadline(t), c.ws.SetWriteDeadline(t))
}
