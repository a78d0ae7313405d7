// Package wslistener serves MQTT over WebSocket (subprotocol "mqtt") as a
// mochi listener, for browser dashboards.
package wslistener

import (
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mochi-mqtt/server/v2/listeners"

	"github.com/edgefence/edgefence/ops"
)

// Listener serves MQTT over WebSocket for browser dashboards. mochi has one, but it binds only when it starts serving, so
// a port taken is a log line rather than a start-up error and ":0" cannot
// be used; this one serves a listener bound before, like the TCP one.
type Listener struct {
	id, addr  string // addr as configured: its host name is this machine's (ops.CheckHost)
	tlsConfig *tls.Config
	ln        net.Listener
	srv       *http.Server
	establish listeners.EstablishFn
	log       *slog.Logger
	closeOnce sync.Once
	anonymous bool // no --auth: the Host must name this machine (ops.CheckHost)
}

var _ listeners.Listener = (*Listener)(nil)

// New returns the listener id serving ln, bound to addr as configured,
// with TLS when tc is set. anonymous (no --auth) makes it answer only a
// Host that names this machine (ops.CheckHost).
func New(id, addr string, ln net.Listener, tc *tls.Config, anonymous bool) *Listener {
	if tc != nil {
		ln = tls.NewListener(ln, tc)
	}
	return &Listener{id: id, addr: addr, ln: ln, tlsConfig: tc, anonymous: anonymous}
}

// ID names the listener.
func (l *Listener) ID() string { return l.id }

// Address is the address listened on.
func (l *Listener) Address() string { return l.ln.Addr().String() }

// Protocol is ws, or wss with TLS.
func (l *Listener) Protocol() string {
	if l.tlsConfig != nil {
		return "wss"
	}
	return "ws"
}

// Init prepares the HTTP server that upgrades connections.
func (l *Listener) Init(log *slog.Logger) error {
	l.log = log
	upgrader := &websocket.Upgrader{
		Subprotocols: []string{"mqtt"},
		// Dashboards are served from anywhere; the MQTT credentials, not
		// the page's origin, decide what a connection may do.
		CheckOrigin:      func(*http.Request) bool { return true },
		HandshakeTimeout: 10 * time.Second,
	}
	var handler http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return // the upgrader has answered
		}
		defer c.Close()
		if err := l.establish(l.id, &wsConn{Conn: c.UnderlyingConn(), c: c}); err != nil {
			l.log.Debug("websocket client ended", "error", err)
		}
	})
	if l.anonymous {
		handler = ops.CheckHost(l.addr, handler)
	}
	l.srv = &http.Server{
		// Until the upgrade: the upgrader clears the deadlines, and MQTT's
		// keep-alive governs the connection from then on. A connection
		// kept alive without upgrading is closed when idle.
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		IdleTimeout:       ops.DefaultIdleTimeout,
		// Failed handshakes of scanners and plain-ws clients on a wss
		// port: at debug level, not unconditionally on stderr.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		Handler:  handler,
	}
	return nil
}

// Serve serves until Close, handing each upgraded connection to establish.
func (l *Listener) Serve(establish listeners.EstablishFn) {
	l.establish = establish
	if err := l.srv.Serve(l.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		l.log.Error("websocket listener stopped", "error", err)
	}
}

// Close stops serving and closes the listener's clients.
func (l *Listener) Close(closeClients listeners.CloseFn) {
	l.closeOnce.Do(func() {
		_ = l.srv.Close() // hijacked connections are closed by closeClients
		closeClients(l.id)
	})
}

// wsConn is an MQTT byte stream over WebSocket binary messages: a packet
// may span messages and a message may hold several packets.
type wsConn struct {
	net.Conn
	c *websocket.Conn
	r io.Reader // the message being read, nil between messages
}

var errTextFrame = errors.New("websocket: MQTT needs binary messages")

// ConnectionState is the TLS state of a wss connection (empty for ws), so
// that a client certificate logs in over WebSocket as over MQTTS.
func (ws *wsConn) ConnectionState() tls.ConnectionState {
	if tc, ok := ws.Conn.(*tls.Conn); ok {
		return tc.ConnectionState()
	}
	return tls.ConnectionState{}
}

func (ws *wsConn) Read(p []byte) (int, error) {
	for {
		if ws.r == nil {
			op, r, err := ws.c.NextReader()
			if err != nil {
				return 0, err
			}
			if op != websocket.BinaryMessage {
				return 0, errTextFrame
			}
			ws.r = r
		}
		n, err := ws.r.Read(p)
		if errors.Is(err, io.EOF) {
			ws.r, err = nil, nil
			if n == 0 {
				continue // an empty message, or the end of one: read on
			}
		}
		return n, err
	}
}

func (ws *wsConn) Write(p []byte) (int, error) {
	if err := ws.c.WriteMessage(websocket.BinaryMessage, p); err != nil {
		return 0, err
	}
	return len(p), nil
}
