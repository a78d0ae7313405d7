package bridge

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/edgefence/edgefence/broker"
)

// writePEM writes one PEM block to dir/name and returns the path.
func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issue makes a key and a certificate for cn signed by ca (self-signed
// when ca is nil), and writes them as PEM files.
func issue(t *testing.T, dir, cn string, ca *x509.Certificate, caKey *ecdsa.PrivateKey, isCA bool) (certPath, keyPath string, cert *x509.Certificate, key *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	if isCA {
		tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
		tmpl.KeyUsage |= x509.KeyUsageCertSign
	}
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca, caKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	cert, err = x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return writePEM(t, dir, cn+".crt", "CERTIFICATE", der), writePEM(t, dir, cn+".key", "EC PRIVATE KEY", kder), cert, key
}

// mqtts:// with --ca, --cert and --key: the bridge verifies an edgefence
// serve upstream's certificate against its CA and logs in with a client
// certificate (mutual TLS: the certificate's CN is the user, who has no
// password).
func TestMutualTLSUpstream(t *testing.T) {
	dir := t.TempDir()
	caPath, _, ca, caKey := issue(t, dir, "test-ca", nil, nil, true)
	srvCert, srvKey, _, _ := issue(t, dir, "127.0.0.1", ca, caKey, false)
	cliCert, cliKey, _, _ := issue(t, dir, "bridge", ca, caKey, false)
	hash := hashed(t)
	users := filepath.Join(dir, "users.yaml")
	yaml := fmt.Sprintf("users:\n  - username: bridge\n    role: admin\n"+ // certificate only
		"  - username: ops\n    role: admin\n    password: %q\n"+
		"  - username: truck-1\n    role: device\n    password: %q\n", hash, hash)
	if err := os.WriteFile(users, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	scfg := broker.DefaultConfig()
	scfg.MQTTAddr, scfg.HTTPAddr = "127.0.0.1:0", ""
	scfg.TLSAddr, scfg.TLSCert, scfg.TLSKey, scfg.TLSClientCA = "127.0.0.1:0", srvCert, srvKey, caPath
	scfg.Fences = filepath.Join("..", "fences.geojson")
	scfg.FencesPoll = 0
	scfg.DataDir = t.TempDir()
	scfg.Auth = users
	scfg.Engine.Hold = 100 * time.Millisecond
	scfg.CloseTimeout = wait
	scfg.Log = testLog()
	srv, err := broker.Start(scfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close(context.Background()) })

	cfg := testConfig(t, "mqtts://"+srv.TLSAddr())
	cfg.CA, cfg.Cert, cfg.Key = caPath, cliCert, cliKey
	cfg.TransitionPrefix, cfg.LateTopic, cfg.RejectTopic = "bridged", "bridged-late", "bridged-rejected"
	b := startBridge(t, cfg)

	o := observe(t, "mqtt://"+srv.MQTTAddr(), "ops", secret, "bridged/#")
	tr := connectTracker(t, srv.MQTTAddr(), "truck-1", secret)
	base := time.Now().UnixMilli() - 60_000
	tr.ping("truck-1", museumLat, museumLon, base)
	want := []string{fmt.Sprintf("truck-1 zone-museumsinsel ENTER %d", base)}
	if got := o.waitTransitions("bridged", 1); !slices.Equal(got, want) {
		t.Fatalf("over mutual TLS: %q, want %q", got, want)
	}
	if n := b.hm.Received.Get(); n != 1 {
		t.Errorf("bridge received %d pings, want 1", n)
	}
}
