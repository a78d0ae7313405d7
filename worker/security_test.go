package worker_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/internal/natstest"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/edgefence/edgefence/internal/syncbuf"
	"github.com/edgefence/edgefence/worker"
	"github.com/edgefence/edgefence/worker/security"
	"github.com/edgefence/edgefence/worker/subjects"
)

// testCA is a certificate authority made by the test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // its certificate, PEM
}

var serial int64

func newCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, file: filepath.Join(dir, name+".pem")}
	writePEM(t, ca.file, "CERTIFICATE", der)
	return ca
}

// issue writes a certificate for 127.0.0.1 signed by ca, and its key,
// and returns their files.
func (ca *testCA) issue(t *testing.T, dir, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kder)
	return certFile, keyFile
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startNATS runs one NATS server in the test's process from the
// configuration conf (its listeners on random loopback ports, which it
// reports), with JetStream and the default mappings onto partitions
// partitions (none when 0); it
// returns the server's client URL and MQTT address.
func startNATS(t *testing.T, partitions int, conf string) (url, mqttAddr string) {
	t.Helper()
	dir := t.TempDir()
	var maps []string
	for from, to := range subjects.PartitionMappings(max(partitions, 1)) {
		maps = append(maps, strconv.Quote(from)+": "+strconv.Quote(to))
	}
	conf += fmt.Sprintf("\njetstream { store_dir: %q }\n", filepath.Join(dir, "js"))
	if partitions > 0 { // else the accounts carry them
		conf += fmt.Sprintf("mappings = { %s }\n", strings.Join(maps, ", "))
	}
	s, opts := natstest.Start(t, dir, "nats.conf", conf)
	return s.ClientURL(), fmt.Sprintf("127.0.0.1:%d", opts.MQTT.Port)
}

// securedConfig is a one-server worker configuration for the security
// tests.
func securedConfig(t *testing.T, url, mqttAddr string) worker.Config {
	t.Helper()
	fences := filepath.Join(t.TempDir(), "fences.geojson")
	if err := os.WriteFile(fences, []byte(testFences), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(workerArgs{NATS: url, MQTT: mqttAddr, Name: "w1", Fences: fences,
		Partitions: 2, Lease: 2 * time.Second, Checkpoint: time.Second})
	cfg.Replicas = 1
	return cfg
}

// onePartition is the set-up of the tests that hand one partition
// between workers: one server, a JetStream client on it, and a worker
// configuration for one partition with a 2 s lease and checkpoints every
// second, logging into logs.
func onePartition(t *testing.T) (jetstream.JetStream, worker.Config, *syncbuf.Buffer) {
	t.Helper()
	url, mqttAddr := startNATS(t, 1, `listen: "127.0.0.1:-1"
mqtt { listen: "127.0.0.1:-1" }
`)
	js, _ := jetstream.New(connect(t, url))
	base := securedConfig(t, url, mqttAddr)
	base.Partitions, base.Lease, base.CheckpointEvery, base.HTTPAddr = 1, 2*time.Second, time.Second, "127.0.0.1:0"
	logs := new(syncbuf.Buffer)
	base.Log = slog.New(slog.NewTextHandler(logs, nil))
	return js, base, logs
}

// waitOwnedAll waits until w owns all of its p partitions.
func waitOwnedAll(t *testing.T, w *worker.Worker, p int) {
	t.Helper()
	for range 300 {
		if len(w.Owned()) == p {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("worker owns %v of %d partitions", w.Owned(), p)
}

// expectEnter publishes a ping inside fence "c" as the tracker client and
// waits for its ENTER on the dashboard client.
func expectEnter(t *testing.T, tracker, dash mqtt.Client, device string) {
	t.Helper()
	got := make(chan string, 8)
	if tok := dash.Subscribe("geofence/c/"+device, 1, func(_ mqtt.Client, m mqtt.Message) { got <- string(m.Payload()) }); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	body := fmt.Sprintf(`{"lat":52.5,"lon":13.4090,"ts":%d}`, time.Now().UnixMilli())
	if tok := tracker.Publish("devices/"+device+"/telemetry", 1, false, body); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("publish: %v", tok.Error())
	}
	select {
	case b := <-got:
		if !strings.Contains(b, `"type":"ENTER"`) {
			t.Fatalf("dashboard got %s, want an ENTER", b)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no ENTER reached the dashboard")
	}
}

// securedMQTT connects an MQTT client over TLS with a login.
func securedMQTT(t *testing.T, id, addr string, tc *tls.Config, user, pass string) mqtt.Client {
	t.Helper()
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker("tls://" + addr).SetClientID(id).SetTLSConfig(tc).
		SetUsername(user).SetPassword(pass).SetCleanSession(true).SetConnectTimeout(10 * time.Second))
	if tok := c.Connect(); !tok.WaitTimeout(20*time.Second) || tok.Error() != nil {
		t.Fatalf("mqtt connect %s: %v", addr, tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	return c
}

// TestWorkerTLSAndLogin: against a NATS server that requires TLS with
// client certificates and a user's login on both its NATS and MQTT
// listeners, a worker given the CA, its certificate and the login owns
// the partitions and publishes transitions; with a CA that did not sign
// the server's certificate, or without TLS or login, it fails to start
// with an error naming the problem.
func TestWorkerTLSAndLogin(t *testing.T) {
	dir := t.TempDir()
	ca, wrong := newCA(t, dir, "ca"), newCA(t, dir, "other-ca")
	srvCert, srvKey := ca.issue(t, dir, "server", x509.ExtKeyUsageServerAuth)
	cliCert, cliKey := ca.issue(t, dir, "worker", x509.ExtKeyUsageClientAuth)
	tlsBlock := fmt.Sprintf("tls { cert_file: %q, key_file: %q, ca_file: %q, verify: true, timeout: 5 }", srvCert, srvKey, ca.file)
	url, mqttAddr := startNATS(t, 2, fmt.Sprintf(`listen: "127.0.0.1:-1"
%s
authorization { users: [ { user: edge, password: "s3cret" } ] }
mqtt { listen: "127.0.0.1:-1", %s }
`, tlsBlock, tlsBlock))

	good := func() worker.Config {
		cfg := securedConfig(t, url, mqttAddr)
		cfg.Security = security.Settings{User: "edge", Password: "s3cret", CA: ca.file, Cert: cliCert, Key: cliKey}
		return cfg
	}
	for name, tc := range map[string]struct {
		mod  func(*worker.Config)
		want string
	}{
		"wrong CA":       {func(c *worker.Config) { c.Security.CA = wrong.file }, "not signed by a CA in --nats-ca " + wrong.file},
		"no CA":          {func(c *worker.Config) { c.Security.CA, c.Security.Cert, c.Security.Key = "", "", "" }, "not signed by a CA this system trusts: give its CA with --nats-ca"},
		"wrong password": {func(c *worker.Config) { c.Security.Password = "nope" }, "refused the worker's login"},
		"no CA file":     {func(c *worker.Config) { c.Security.CA = filepath.Join(dir, "missing.pem") }, "--nats-ca"},
	} {
		cfg := good()
		tc.mod(&cfg)
		w, err := worker.Start(cfg)
		if err == nil {
			_ = w.Close(context.Background())
			t.Errorf("%s: the worker started", name)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q does not say %q", name, err, tc.want)
		}
		t.Logf("%s: %v", name, err)
	}

	w, err := worker.Start(good())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close(context.Background()) }()
	waitOwnedAll(t, w, 2)
	cliTLS := clientTLS(t, ca.file, cliCert, cliKey)
	tracker := securedMQTT(t, "tracker", mqttAddr, cliTLS, "edge", "s3cret")
	dash := securedMQTT(t, "dash", mqttAddr, cliTLS, "edge", "s3cret")
	expectEnter(t, tracker, dash, "dev-1")
}

func clientTLS(t *testing.T, caFile, certFile, keyFile string) *tls.Config {
	t.Helper()
	pool := x509.NewCertPool()
	b, err := os.ReadFile(caFile)
	if err != nil || !pool.AppendCertsFromPEM(b) {
		t.Fatalf("ca %s: %v", caFile, err)
	}
	kp, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{kp}, MinVersion: tls.VersionTLS12}
}

// TestWorkerCreds: against a NATS server in operator mode (JWT accounts),
// a worker given a .creds file logs in on NATS with it and on MQTT with
// its JWT (a bearer-token user), owns the partitions and publishes
// transitions; the same file with another account's user is refused.
func TestWorkerCreds(t *testing.T) {
	dir := t.TempDir()
	okp, _ := nkeys.CreateOperator()
	opub, _ := okp.PublicKey()
	ojwt, err := jwt.NewOperatorClaims(opub).Encode(okp)
	if err != nil {
		t.Fatal(err)
	}
	account := func(js bool) (nkeys.KeyPair, string, string) {
		kp, _ := nkeys.CreateAccount()
		pub, _ := kp.PublicKey()
		ac := jwt.NewAccountClaims(pub)
		if js {
			ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
			ac.Mappings = jwt.Mapping{}
			for from, to := range subjects.PartitionMappings(2) {
				ac.Mappings[jwt.Subject(from)] = []jwt.WeightedMapping{{Subject: jwt.Subject(to)}}
			}
		}
		s, err := ac.Encode(okp)
		if err != nil {
			t.Fatal(err)
		}
		return kp, pub, s
	}
	_, spub, sjwt := account(false)
	akp, apub, ajwt := account(true)
	creds := func(name string, signer nkeys.KeyPair, bearer bool) (file, userJWT string) {
		ukp, _ := nkeys.CreateUser()
		upub, _ := ukp.PublicKey()
		uc := jwt.NewUserClaims(upub)
		uc.BearerToken = bearer // what MQTT clients need: they cannot sign the server's nonce
		ujwt, err := uc.Encode(signer)
		if err != nil {
			t.Fatal(err)
		}
		seed, _ := ukp.Seed()
		b, _ := jwt.FormatUserConfig(ujwt, seed)
		file = filepath.Join(dir, name+".creds")
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return file, ujwt
	}
	good, userJWT := creds("worker", akp, true)
	strangerKP, _ := nkeys.CreateAccount() // an account the server does not know
	stranger, _ := creds("stranger", strangerKP, true)
	opFile := filepath.Join(dir, "operator.jwt")
	if err := os.WriteFile(opFile, []byte(ojwt), 0o600); err != nil {
		t.Fatal(err)
	}
	url, mqttAddr := startNATS(t, 0, fmt.Sprintf(`listen: "127.0.0.1:-1"
operator: %q
system_account: %s
resolver: MEMORY
resolver_preload: { %s: %q, %s: %q }
mqtt { listen: "127.0.0.1:-1" }
`, opFile, spub, spub, sjwt, apub, ajwt))

	cfg := securedConfig(t, url, mqttAddr)
	cfg.Security = security.Settings{Creds: stranger}
	if w, err := worker.Start(cfg); err == nil {
		_ = w.Close(context.Background())
		t.Error("a stranger's creds: the worker started")
	} else if !strings.Contains(err.Error(), "refused the worker's login") {
		t.Errorf("a stranger's creds: error %q does not say the login was refused", err)
	}

	cfg.Security = security.Settings{Creds: good}
	w, err := worker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close(context.Background()) }()
	waitOwnedAll(t, w, 2)
	tracker := mqttLogin(t, "tracker", mqttAddr, userJWT)
	dash := mqttLogin(t, "dash", mqttAddr, userJWT)
	expectEnter(t, tracker, dash, "dev-2")
}

func mqttLogin(t *testing.T, id, addr, password string) mqtt.Client {
	t.Helper()
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker("tcp://" + addr).SetClientID(id).
		SetUsername(id).SetPassword(password).SetCleanSession(true).SetConnectTimeout(10 * time.Second))
	if tok := c.Connect(); !tok.WaitTimeout(20*time.Second) || tok.Error() != nil {
		t.Fatalf("mqtt connect %s: %v", addr, tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	return c
}
