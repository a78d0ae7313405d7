// Package security is how a worker authenticates to its NATS cluster and
// verifies it: the credentials and TLS settings of its NATS and MQTT
// connections, and errors that say what an operator can do about a
// refused login or a failed certificate check.
package security

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/eclipse/paho.mqtt.golang/packets"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/edgefence/edgefence/clienttls"
)

// Settings are how a worker authenticates to the NATS cluster and
// verifies it: the same credentials and TLS settings serve its NATS
// connection and its MQTT one, as a cluster secured for one is secured for
// both (docs/scale-out.md, "Credentials and TLS").
type Settings struct {
	// Creds is a NATS .creds file (user JWT and NKey seed). Over MQTT the
	// JWT goes in the password field, which NATS accepts for bearer-token
	// users only.
	Creds string
	// User and Password authenticate both connections (NATS users, or the
	// mqtt block's own authorization). The NATS URLs may carry them too.
	User, Password string
	// CA is a PEM file of the CAs the servers' certificates are checked
	// against; empty: the system's roots.
	CA string
	// Cert and Key are the worker's client certificate and key (PEM),
	// for servers that verify clients.
	Cert, Key string
}

// tls reports whether the connections use TLS.
func (s *Settings) tls() bool { return s.CA != "" || s.Cert != "" }

// Validate reports the first setting that contradicts another, naming
// the flags.
func (s *Settings) Validate() error {
	switch {
	case (s.Cert == "") != (s.Key == ""):
		return errors.New("--nats-cert and --nats-key go together")
	case s.Creds != "" && s.User != "":
		return errors.New("--nats-creds and --nats-user are two ways to log in: give one")
	case s.Password != "" && s.User == "":
		return errors.New("--nats-password without --nats-user")
	}
	return nil
}

// TLSConfig loads the CA and the client certificate; nil when the
// worker is configured without TLS.
func (s *Settings) TLSConfig() (*tls.Config, error) {
	if !s.tls() {
		return nil, nil
	}
	c, err := clienttls.Config(s.CA, s.Cert, s.Key)
	if err != nil {
		return nil, fmt.Errorf("--nats-ca, --nats-cert, --nats-key: %w", err)
	}
	return c, nil
}

// NATSOptions are the NATS connection's options for s.
func (s *Settings) NATSOptions(tc *tls.Config) []nats.Option {
	var opts []nats.Option
	if tc != nil {
		opts = append(opts, nats.Secure(tc))
	}
	if s.Creds != "" {
		opts = append(opts, nats.UserCredentials(s.Creds))
	}
	if s.User != "" {
		opts = append(opts, nats.UserInfo(s.User, s.Password))
	}
	return opts
}

// MQTTLogin returns the MQTT username and password for s: the user's, or
// the creds file's JWT as the password (NATS reads a JWT there).
func (s *Settings) MQTTLogin(name string) (user, password string, err error) {
	if s.Creds == "" {
		return s.User, s.Password, nil
	}
	data, err := os.ReadFile(s.Creds)
	if err != nil {
		return "", "", fmt.Errorf("--nats-creds: %w", err)
	}
	jwt, err := nkeys.ParseDecoratedJWT(data)
	if err != nil {
		return "", "", fmt.Errorf("--nats-creds %s: %w", s.Creds, err)
	}
	return name, jwt, nil
}

// RedactURLs hides the passwords of comma-separated URLs, for logs and
// errors.
func RedactURLs(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil && u.User != nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}

// MQTTBroker is the paho URL of one --nats-mqtt address: a bare host:port
// is TLS when the worker has TLS settings; tcp:// or tls:// say so.
func MQTTBroker(addr string, tlsOn bool) string {
	if strings.Contains(addr, "://") {
		return addr
	}
	if tlsOn {
		return "tls://" + addr
	}
	return "tcp://" + addr
}

// Permanent reports whether a connection error will not go away by
// itself: a login refused or a TLS failure, which retrying only hides.
func Permanent(err error) bool {
	return certFailure(err) != nil ||
		errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword) || errors.Is(err, packets.ErrorRefusedNotAuthorised)
}

// certFailure returns the server certificate's verification error in
// err, or nil.
func certFailure(err error) error {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	switch {
	case errors.As(err, &unknown):
		return unknown
	case errors.As(err, &host):
		return host
	case errors.As(err, &invalid):
		return invalid
	}
	return nil
}

// Explain adds to a connection error what the operator can do about it:
// the TLS and login failures a misconfigured worker meets first.
func (s *Settings) Explain(err error) error {
	switch certFailure(err).(type) {
	case x509.UnknownAuthorityError:
		if s.CA == "" {
			return fmt.Errorf("%w (the server's certificate is not signed by a CA this system trusts: give its CA with --nats-ca)", err)
		}
		return fmt.Errorf("%w (the server's certificate is not signed by a CA in --nats-ca %s)", err, s.CA)
	case x509.HostnameError:
		return fmt.Errorf("%w (the server's certificate does not name the host in the URL)", err)
	case x509.CertificateInvalidError:
		return fmt.Errorf("%w (the server's certificate is not valid: expired or not for servers)", err)
	}
	switch {
	case errors.Is(err, nats.ErrSecureConnRequired):
		return fmt.Errorf("%w (the server requires TLS: give --nats-ca, or --nats-cert and --nats-key)", err)
	case errors.Is(err, nats.ErrSecureConnWanted):
		return fmt.Errorf("%w (the server does not offer TLS: drop --nats-ca, --nats-cert and --nats-key)", err)
	case errors.Is(err, io.EOF):
		// NATS's MQTT side closes the connection on a refused login
		// without a CONNACK reason code.
		return fmt.Errorf("%w (the listener closed the connection: a login it refuses — over MQTT a creds file's user must be a bearer token — or a TLS listener given as tcp://)", err)
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked),
		errors.Is(err, packets.ErrorRefusedBadUsernameOrPassword), errors.Is(err, packets.ErrorRefusedNotAuthorised):
		return fmt.Errorf("%w (the server refused the worker's login: check --nats-creds or --nats-user and --nats-password)", err)
	}
	return err
}
