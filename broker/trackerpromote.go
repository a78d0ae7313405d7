package broker

import (
	"bytes"
	"net"

	"github.com/mochi-mqtt/server/v2/packets"
)

// With LightTrackers the MQTT TCP listener's connections start on the
// tracker path: most clients of an edge broker are trackers that only
// publish, and there a connection costs a small goroutine instead of
// mochi's two and its outbound queue. A client that needs what only mochi
// has — a subscription, QoS 2, its stored session, anything the tracker
// path would refuse — is handed to mochi as it asks: mochi is given its
// CONNECT again, and then everything the client sent from the packet that
// needed mochi on, and its CONNACK, which the client already has, is not
// sent twice. A client is handed over at most once, and never back.

// errPromote ends a connection's tracker path: mochi is to serve it.
type errPromote struct {
	pending []byte // read from the socket, for mochi to read next
}

func (*errPromote) Error() string { return "handed over to mochi" }

// promote hands the connection to mochi from the packet being handled on.
func promote() error { return &errPromote{} }

// serveLight serves c on the tracker path, in the caller's goroutine, and
// returns the connection mochi is to serve from then on, or nil when it
// has ended.
func (t *trackerListener) serveLight(c net.Conn) net.Conn {
	tc := newTrackerConn(t, c)
	tc.promote = true
	if !t.add(tc) {
		return nil
	}
	tc.serve()
	if tc.handover == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		// The broker is stopping: not one more client for mochi.
		_ = tc.c.Close()
		return nil
	}
	t.handing[tc.c] = struct{}{}
	return tc.handover
}

// handed forgets a connection handed to mochi once mochi has it among its
// clients, or has ended it: the broker's close disconnects it then.
func (t *trackerListener) handed(c net.Conn) {
	if rc, ok := c.(*replayConn); ok {
		c = rc.Conn
	}
	t.mu.Lock()
	delete(t.handing, c)
	t.mu.Unlock()
}

// handOver readies the connection for mochi: it is no longer a tracker
// connection (not counted, not registered, its will mochi's), and mochi
// reads the CONNECT and then what was pending.
func (tc *trackerConn) handOver(p *errPromote) {
	t := tc.t
	hello := tc.hello
	if tc.ok {
		tc.uncount()
		if tc.assigned {
			hello = tc.helloWithID()
		}
	}
	t.info.promoted.Inc()
	rc := &replayConn{Conn: tc.c, pending: append(hello, p.pending...), aliases: tc.aliases}
	if tc.ok {
		rc.drop = -1 // the client has its CONNACK
	}
	tc.handover = rc
}

// helloWithID is the CONNECT with the client id the tracker path assigned
// (and told an MQTT 5 client): mochi must not assign another.
func (tc *trackerConn) helloWithID() []byte {
	var pk packets.Packet
	pk.FixedHeader.Type = packets.Connect
	_, hdr := frameSize(tc.hello)
	if pk.ConnectDecode(tc.hello[hdr:]) != nil {
		return tc.hello // it decoded before
	}
	pk.Connect.ClientIdentifier = tc.id
	var buf bytes.Buffer
	if pk.ConnectEncode(&buf) != nil {
		return tc.hello
	}
	return buf.Bytes()
}

// replayConn is a connection mochi takes over from the tracker path: it
// reads pending first, and drops the CONNACK mochi writes when the client
// already has one.
type replayConn struct {
	net.Conn
	pending []byte
	drop    int    // bytes of CONNACK still to drop; -1: its length not read yet; 0: none
	head    []byte // the first bytes written while the CONNACK's length is not known
	aliases map[uint16]string
}

func (r *replayConn) Read(p []byte) (int, error) {
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	return r.Conn.Read(p)
}

// Write writes p but for the CONNACK mochi writes first, when it is to be
// dropped. mochi's writes are serialised (coalescingConn).
func (r *replayConn) Write(p []byte) (int, error) {
	n := len(p)
	if r.drop < 0 {
		head := append(r.head, p...)
		size, hdr := frameSize(head)
		switch {
		case hdr == 0 && head[0]>>4 == packets.Connack:
			r.head = head
			return n, nil // its length is still cut short
		case hdr <= 0 || head[0]>>4 != packets.Connack:
			p, r.drop = head, 0 // not a CONNACK: nothing to drop
		case size >= len(head):
			p, r.drop = nil, size-len(head)
		default:
			p, r.drop = head[size:], 0
		}
		r.head = nil
	} else if r.drop > 0 {
		k := min(r.drop, len(p))
		p, r.drop = p[k:], r.drop-k
	}
	if len(p) == 0 {
		return n, nil
	}
	if _, err := r.Conn.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}
