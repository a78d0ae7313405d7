package broker

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/mochi-mqtt/server/v2/listeners"

	"github.com/edgefence/edgefence/broker/acceptwatch"
	"github.com/edgefence/edgefence/broker/wslistener"
)

// ErrExposed is returned when an anonymous broker would listen beyond
// loopback.
var ErrExposed = errors.New("refusing to listen beyond loopback without authentication")

// checkExposure is the Mosquitto 2 rule: with no user file, listen on
// loopback only, unless the operator says anonymous access is intended.
// The HTTP listener too: its metrics name devices and clients.
func (c *Config) checkExposure() error {
	if c.Auth != "" || c.AllowAnonymous {
		return nil
	}
	addrs := []string{c.MQTTAddr, c.WSAddr}
	if c.TLSCert != "" {
		addrs = append(addrs, c.TLSAddr)
	}
	for _, a := range addrs {
		if a != "" && !loopback(a) {
			return fmt.Errorf("%w: %s would let anyone publish positions and read transitions; give --auth FILE, or --allow-anonymous if this network is trusted", ErrExposed, a)
		}
	}
	if c.HTTPAddr != "" && !loopback(c.HTTPAddr) {
		return fmt.Errorf("%w: --http-addr %s would show anyone the metrics (and with --pprof, profiles); give --auth FILE (then /metrics and pprof need an admin user, the page a dashboard or admin user; /healthz and /readyz stay open), or --allow-anonymous if this network is trusted", ErrExposed, c.HTTPAddr)
	}
	return nil
}

// loopback reports whether a listen address binds loopback only. An
// empty host binds every interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tlsConfig builds the server side of MQTTS and secure WebSocket, or nil.
// With a client CA, certificates are verified when presented (a device
// may still log in with a password) and their CN names the user.
func (c *Config) tlsConfig() (*tls.Config, error) {
	if c.TLSCert == "" && c.TLSKey == "" {
		if c.TLSClientCA != "" {
			return nil, errors.New("--tls-client-ca needs --tls-cert and --tls-key")
		}
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.TLSCert, c.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("tls certificate %s / key %s: %w", c.TLSCert, c.TLSKey, err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.TLSClientCA != "" {
		pem, err := os.ReadFile(c.TLSClientCA)
		if err != nil {
			return nil, fmt.Errorf("tls client CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls client CA %s: no PEM certificates in it", c.TLSClientCA)
		}
		tc.ClientCAs = pool
		tc.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return tc, nil
}

// connSet holds the open MQTT connections, so that Close can end those
// that are not mochi's clients yet: mochi's Close waits for every
// connection's goroutine, and one that has not sent a whole CONNECT is in
// no list mochi disconnects.
type connSet struct {
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
}

// add holds c, or reports false once the set is closed.
func (cs *connSet) add(c net.Conn) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		return false
	}
	if cs.conns == nil {
		cs.conns = map[net.Conn]struct{}{}
	}
	cs.conns[c] = struct{}{}
	return true
}

func (cs *connSet) remove(c net.Conn) {
	cs.mu.Lock()
	delete(cs.conns, c)
	cs.mu.Unlock()
}

// close ends the reads of every connection held, and of any added later.
// Closing rather than expiring them makes a read end with net.ErrClosed,
// which the log knows for the server's own doing (mochilog), not with a
// timeout that reads like a client's fault.
func (cs *connSet) close() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.closed = true
	for c := range cs.conns {
		_ = c.Close()
	}
}

// sockets are the MQTT listeners' sockets, bound first thing in Start so
// that a port in use fails the start before anything else runs or logs
// (mochi's "server started" above the error read as a start); listen
// hands them to mochi, and Close closes those it did not.
type sockets struct{ tcp, tls, ws net.Listener }

// bindAll binds the sockets of the configured MQTT listeners, or none.
func (s *Server) bindAll(tc *tls.Config) (err error) {
	defer func() {
		if err != nil {
			s.sockets.close()
		}
	}()
	if s.sockets.tcp, err = s.bind("tcp", s.cfg.MQTTAddr); err != nil {
		return err
	}
	if tc != nil {
		if s.sockets.tls, err = s.bind("tls", s.cfg.TLSAddr); err != nil {
			return err
		}
	}
	if s.cfg.WSAddr != "" {
		if s.sockets.ws, err = s.bind("ws", s.cfg.WSAddr); err != nil {
			return err
		}
	}
	return nil
}

// close closes the sockets not handed to mochi.
func (ss *sockets) close() {
	for _, ln := range []*net.Listener{&ss.tcp, &ss.tls, &ss.ws} {
		if *ln != nil {
			_ = (*ln).Close()
			*ln = nil
		}
	}
}

// listen serves the MQTT listeners on the bound sockets. Each connection
// must send CONNECT within the connect timeout: mochi reads it with no
// deadline, so an idle socket would hold a goroutine forever. mochi
// replaces the deadline with the keepalive once connected.
func (s *Server) listen(tc *tls.Config) error {
	establish := func(id string, c net.Conn) error {
		if !s.conns.add(c) {
			return c.Close() // the server is closing
		}
		defer s.conns.remove(c)
		if s.cfg.ConnectTimeout > 0 {
			_ = c.SetDeadline(time.Now().Add(s.cfg.ConnectTimeout))
		}
		return s.mqtt.EstablishConnection(id, c)
	}
	add := func(l listeners.Listener, addr string) error {
		if err := s.mqtt.AddListener(l); err != nil {
			l.Close(func(string) {}) // its socket is bound
			return fmt.Errorf("%s listener %s: %w", l.ID(), addr, err)
		}
		s.mqtt.Listeners.Serve(l.ID(), establish)
		return nil
	}
	ss := &s.sockets
	s.tcp = listeners.NewNet("tcp", ss.tcp)
	ss.tcp = nil
	if err := add(s.tcp, s.cfg.MQTTAddr); err != nil {
		return err
	}
	if ss.tls != nil {
		s.tls = listeners.NewNet("tls", tls.NewListener(ss.tls, tc))
		ss.tls = nil
		if err := add(s.tls, s.cfg.TLSAddr); err != nil {
			return err
		}
	}
	if ss.ws != nil {
		s.ws = wslistener.New("ws", s.cfg.WSAddr, ss.ws, tc, s.cfg.Auth == "")
		ss.ws = nil
		if err := add(s.ws, s.cfg.WSAddr); err != nil {
			return err
		}
	}
	return nil
}

// bind listens on addr for the MQTT listener id, watching its Accept
// errors for /readyz, the log and edgefence_accept_errors_total.
func (s *Server) bind(id, addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s listener %s: %w", id, addr, err)
	}
	w := acceptwatch.Wrap(ln, id, s.set, s.log)
	s.accepting = append(s.accepting, w)
	return w, nil
}

// TLSAddr returns the MQTTS listener's address, or "".
func (s *Server) TLSAddr() string {
	if s.tls == nil {
		return ""
	}
	return s.tls.Address()
}

// WSAddr returns the WebSocket listener's address, or "".
func (s *Server) WSAddr() string {
	if s.ws == nil {
		return ""
	}
	return s.ws.Address()
}
