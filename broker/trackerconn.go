package broker

import (
	"bytes"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/hooks"
)

// trackerConn is one connection on the tracker path: the tracker
// listener's, or the MQTT listener's until mochi takes it over. Its
// goroutine reads, handles and answers; others only write a DISCONNECT and
// close it (takeover, shutdown).
type trackerConn struct {
	t      *trackerListener
	c      net.Conn
	remote string

	// Set by CONNECT, read-only after.
	id   string
	user []byte
	v5   bool
	span time.Duration // 1.5 × keepalive; 0: none
	will *packets.Packet

	buf      []byte // read, not yet handled: buf[:n]
	n        int
	out      []byte // answers to what one read brought, written at once
	outPkts  int
	deadline time.Time // the read deadline last set
	topics   topics
	aliases  map[uint16]string // MQTT 5 inbound topic aliases

	// The MQTT listener's light connections (LightTrackers): handed to
	// mochi when they need it (trackerpromote.go).
	promote  bool
	hello    []byte   // the CONNECT, for mochi
	assigned bool     // the client id is the tracker path's
	expiry   uint32   // MQTT 5 session expiry asked for
	handover net.Conn // set when mochi is to serve the connection

	wmu    sync.Mutex   // serialises writes
	ending atomic.Value // string: why another goroutine closed it
	tell   atomic.Bool  // v5, for other goroutines: tell it why it is closed
	ok     bool         // CONNECT accepted and counted
}

func newTrackerConn(t *trackerListener, c net.Conn) *trackerConn {
	return &trackerConn{t: t, c: c, remote: c.RemoteAddr().String()}
}

// errClosed ends a connection the server closes on purpose; why is the
// closed_total reason ("": a clean end, counted nowhere).
type errClosed struct{ why string }

func (e errClosed) Error() string { return "closed: " + e.why }

// closeFor ends the connection for why, once what is to be written before
// (an MQTT 5 DISCONNECT, see disconnect) is written.
func closeFor(why string) error { return errClosed{why} }

// serve runs the connection to its end.
func (tc *trackerConn) serve() {
	defer tc.t.done(tc)
	tc.finish(tc.run())
}

// finish closes the connection, counts why, and publishes the will when
// the client did not disconnect cleanly. Not inlined: serve's frame is at
// the bottom of the stack a connection waits for input on, and the will's
// packet would keep that stack from shrinking to its smallest.
//
//go:noinline
func (tc *trackerConn) finish(err error) {
	var p *errPromote
	if errors.As(err, &p) {
		tc.handOver(p)
		return
	}
	_ = tc.c.Close()
	why := ""
	var ec errClosed
	if errors.As(err, &ec) {
		why = ec.why
	}
	if v, ok := tc.ending.Load().(string); ok {
		why = v
	}
	if c := tc.t.info.closed[why]; c != nil {
		c.Inc()
	}
	if !tc.ok {
		return
	}
	tc.uncount()
	if tc.will != nil && why != "shutdown" {
		tc.inject(*tc.will)
	}
}

// uncount undoes what a CONNECT accepted counted: the connection is no
// longer the tracker path's.
func (tc *trackerConn) uncount() {
	tc.t.info.connected.Add(-1)
	atomic.AddInt64(&tc.t.srv.Info.ClientsConnected, -1)
	if tc.t.rate != nil {
		tc.t.rate.Forget(tc)
	}
}

// run reads CONNECT, then packets until the connection ends, and writes
// what it was to answer before it ends (a DISCONNECT, for MQTT 5).
func (tc *trackerConn) run() error {
	err := tc.read()
	tc.flush()
	return err
}

// read is run's loop.
func (tc *trackerConn) read() error {
	tc.buf = make([]byte, tc.bufSize())
	if d := tc.t.cfg.ConnectTimeout; d > 0 {
		_ = tc.c.SetReadDeadline(time.Now().Add(d))
	}
	for {
		if err := tc.readOnce(); err != nil {
			return err
		}
	}
}

// readOnce reads what the socket has, handles every whole packet in it
// (the first: CONNECT), and writes the answers in one write.
func (tc *trackerConn) readOnce() error {
	m, err := tc.c.Read(tc.buf[tc.n:])
	tc.n += m
	if err != nil {
		if tc.ok && tc.span > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
			tc.disconnect(packets.ErrKeepAliveTimeout)
			return closeFor(closedKeepalive)
		}
		return err // EOF, reset, or closed by another goroutine
	}
	off := 0
	for off < tc.n {
		size, hdr := frameSize(tc.buf[off:tc.n])
		if hdr < 0 {
			tc.disconnect(packets.ErrMalformedVariableByteInteger)
			return closeFor(closedProtocol)
		}
		// Before CONNECT, nobody has logged in to make it allocate a
		// large buffer.
		if limit := int(tc.t.cfg.MaxPacketSize); limit > 0 && size > limit || hdr > 0 && !tc.ok && size > 64<<10 {
			tc.disconnect(packets.ErrPacketTooLarge)
			return closeFor(closedProtocol)
		}
		if hdr == 0 || size > tc.n-off {
			break // not all here yet
		}
		pk := tc.buf[off : off+size]
		off += size
		var err error
		if !tc.ok {
			err = tc.connect(pk, hdr)
		} else {
			err = tc.handle(pk, hdr)
		}
		if err != nil {
			if p, ok := err.(*errPromote); ok {
				from := off - size // mochi reads this packet next
				if !tc.ok {
					from = off // mochi is given the CONNECT from tc.hello
				}
				p.pending = bytes.Clone(tc.buf[from:tc.n])
			}
			return err
		}
	}
	tc.flush()
	tc.keep(off)
	tc.refreshDeadline()
	return nil
}

// keep moves what is left of a packet to the buffer's start, grows the
// buffer for a packet longer than it, and gives back a grown one once it
// is empty.
func (tc *trackerConn) keep(off int) {
	rest := tc.n - off
	if off > 0 {
		copy(tc.buf, tc.buf[off:tc.n])
		tc.n = rest
	}
	// A buffer of at least 64 bytes holds any fixed header (5 bytes at
	// most), so a packet's size is known before the buffer is full.
	if need, hdr := frameSize(tc.buf[:tc.n]); hdr > 0 && need > len(tc.buf) {
		b := make([]byte, need)
		copy(b, tc.buf[:tc.n])
		tc.buf = b
	} else if tc.n == 0 && len(tc.buf) > tc.bufSize() {
		tc.buf = make([]byte, tc.bufSize())
	}
}

// bufSize is a connection's read buffer when no packet needs more.
func (tc *trackerConn) bufSize() int { return max(tc.t.cfg.ClientReadBuffer, 64) }

// refreshDeadline moves the keepalive deadline on. Setting a deadline
// costs a timer update, so it is moved once a second at most: a client is
// closed up to a second later than 1.5 × its keepalive.
func (tc *trackerConn) refreshDeadline() {
	if tc.span == 0 {
		return
	}
	now := time.Now()
	if d := now.Add(tc.span); d.Sub(tc.deadline) >= time.Second || tc.span < 4*time.Second {
		tc.deadline = d
		_ = tc.c.SetReadDeadline(d)
	}
}

// handle handles one whole packet after CONNECT.
func (tc *trackerConn) handle(pk []byte, hdr int) error {
	atomic.AddInt64(&tc.t.srv.Info.PacketsReceived, 1)
	switch pk[0] >> 4 {
	case packets.Publish:
		return tc.publish(pk, hdr)
	case packets.Pingreq:
		if pk[0] != packets.Pingreq<<4 || len(pk) != 2 {
			break
		}
		tc.write(packets.Pingresp<<4, 0)
		return nil
	case packets.Disconnect:
		if pk[0] != packets.Disconnect<<4 {
			break
		}
		if tc.v5 && len(pk) > hdr && pk[hdr] == packets.CodeDisconnectWillMessage.Code {
			return closeFor("") // the client asks for its will
		}
		tc.will = nil
		return closeFor("")
	case packets.Subscribe, packets.Unsubscribe:
		if tc.promote {
			return promote()
		}
		return tc.refuseSubscription(pk, hdr)
	}
	if tc.promote {
		return promote() // mochi's to answer, whatever it is
	}
	tc.disconnect(packets.ErrProtocolViolation)
	return closeFor(closedProtocol)
}

// publish handles a PUBLISH: a ping goes to the engine as on the MQTT
// listener's direct ingest; anything else to mochi.
func (tc *trackerConn) publish(pk []byte, hdr int) error {
	b0 := pk[0]
	qos := b0 >> 1 & 3
	if qos == 3 {
		tc.disconnect(packets.ErrProtocolViolationQosOutOfRange)
		return closeFor(closedProtocol)
	}
	if qos == 2 {
		if tc.promote {
			return promote()
		}
		tc.disconnect(packets.ErrQosNotSupported)
		return closeFor(closedUnsupported)
	}
	body := pk[hdr:]
	if len(body) < 2 {
		tc.disconnect(packets.ErrMalformedTopic)
		return closeFor(closedProtocol)
	}
	n := int(body[0])<<8 | int(body[1])
	if 2+n > len(body) {
		tc.disconnect(packets.ErrMalformedTopic)
		return closeFor(closedProtocol)
	}
	name, rest := body[2:2+n], body[2+n:]
	var id uint16
	if qos == 1 {
		if len(rest) < 2 || rest[0] == 0 && rest[1] == 0 {
			tc.disconnect(packets.ErrMalformedPacketID)
			return closeFor(closedProtocol)
		}
		id, rest = uint16(rest[0])<<8|uint16(rest[1]), rest[2:]
	}
	atomic.AddInt64(&tc.t.srv.Info.BytesReceived, int64(len(pk)))
	atomic.AddInt64(&tc.t.srv.Info.MessagesReceived, 1)
	if tc.v5 && (len(rest) == 0 || rest[0] != 0) || b0&1 != 0 {
		// Properties (a topic alias above all) or RETAIN: mochi's
		// decoder reads them, off the pings' path.
		return tc.publishSlow(pk, hdr)
	}
	if tc.v5 {
		rest = rest[1:]
	}
	if !plainTopic(name) {
		return tc.badTopic(name, qos, id)
	}
	topic := tc.topics.intern(name)
	return tc.deliver(topic, rest, qos, id, nil)
}

// deliver admits, evaluates or passes on a publish on topic whose
// payload is body. full is the decoded packet when it had properties or
// RETAIN, nil otherwise.
func (tc *trackerConn) deliver(topic string, body []byte, qos byte, id uint16, full *packets.Packet) error {
	t := tc.t
	if !t.access.Allows(tc.user, topic, true) {
		return tc.notAuthorized(topic, qos, id)
	}
	if t.rate != nil && !t.rate.Admit(tc) {
		if t.rate.Refused(tc, tc.id, tc.remote) {
			tc.disconnect(packets.ErrMessageRateTooHigh)
			return closeFor(closedLimit)
		}
		if qos == 1 && tc.v5 {
			tc.ack(id, packets.ErrMessageRateTooHigh)
		}
		return nil // QoS 1: no acknowledgement, the tracker sends it again
	}
	if t.tel != nil {
		if m, ok := t.tel.Match(topic); ok {
			t.taken.Inc()
			answer, route := t.tel.Handle(m, topic, body, tc.id, qos, tc.v5)
			// As on the MQTT listener: a ping goes to subscribers when
			// someone may receive it, and a retained one is retained.
			if route && (t.tel.Routed() || full != nil && full.FixedHeader.Retain) {
				tc.forward(topic, body, qos, full)
			}
			switch answer {
			case hooks.AnswerAck:
				if qos == 1 {
					tc.acked(id, full)
				}
			case hooks.AnswerQuota:
				tc.ack(id, packets.ErrQuotaExceeded)
			case hooks.AnswerInvalid:
				tc.ack(id, packets.ErrPayloadFormatInvalid)
			}
			return nil
		}
	}
	tc.forward(topic, body, qos, full)
	if qos == 1 {
		tc.acked(id, full)
	}
	return nil
}

// badTopic answers a publish on a topic mochi would not route: a '$'
// topic is the server's (refused, as the MQTT listener refuses it), a
// wildcard, NUL or invalid UTF-8 is malformed.
func (tc *trackerConn) badTopic(name []byte, qos byte, id uint16) error {
	if tc.promote {
		return promote() // mochi's answer, whatever the topic's fault
	}
	if len(name) > 0 && name[0] == '$' {
		return tc.notAuthorized(string(name), qos, id)
	}
	tc.disconnect(packets.ErrTopicNameInvalid)
	return closeFor(closedProtocol)
}

// notAuthorized refuses a publish the ACL does not allow, as mochi does:
// 0x87 for an MQTT 5 QoS 1 publish, dropped at QoS 0, and the connection
// closed for MQTT 3.1.1 at QoS 1, which has no way to say no.
func (tc *trackerConn) notAuthorized(topic string, qos byte, id uint16) error {
	switch {
	case qos == 0:
		return nil
	case tc.v5:
		tc.ack(id, packets.ErrNotAuthorized)
		return nil
	}
	tc.t.warn("closing tracker connection: publish not authorized", "client", tc.id, "topic", topic, "remote", tc.remote)
	return closeFor(closedNotAuthorized)
}

// refuseSubscription answers SUBSCRIBE and UNSUBSCRIBE: the listener
// serves publishers only. Each filter is refused (SUBACK 0x80; 0x83
// "implementation specific error" for MQTT 5) and the connection stays
// open; an UNSUBSCRIBE finds nothing to remove.
func (tc *trackerConn) refuseSubscription(b []byte, hdr int) error {
	var pk packets.Packet
	if err := pk.FixedHeader.Decode(b[0]); err != nil {
		tc.disconnect(packets.ErrMalformedFlags)
		return closeFor(closedProtocol)
	}
	pk.FixedHeader.Remaining = len(b) - hdr
	pk.ProtocolVersion = 4
	if tc.v5 {
		pk.ProtocolVersion = 5
	}
	var err error
	if pk.FixedHeader.Type == packets.Subscribe {
		err = pk.SubscribeDecode(b[hdr:])
	} else {
		err = pk.UnsubscribeDecode(b[hdr:])
	}
	if err != nil {
		tc.disconnect(packets.ErrMalformedPacket)
		return closeFor(closedProtocol)
	}
	out := packets.Packet{ProtocolVersion: pk.ProtocolVersion, PacketID: pk.PacketID}
	code := packets.ErrUnspecifiedError.Code // 0x80, what 3.1.1 has
	if tc.v5 {
		code = packets.ErrImplementationSpecificError.Code
		out.Properties.ReasonString = "the tracker listener takes publishes only: subscribe on the MQTT listener"
	}
	if pk.FixedHeader.Type == packets.Subscribe {
		out.FixedHeader.Type = packets.Suback
		for range pk.Filters {
			out.ReasonCodes = append(out.ReasonCodes, code)
		}
		tc.t.warn("refused a subscription on the tracker listener, which takes publishes only", "client", tc.id, "filters", len(pk.Filters), "remote", tc.remote)
	} else {
		out.FixedHeader.Type = packets.Unsuback
		if tc.v5 {
			for range pk.Filters {
				out.ReasonCodes = append(out.ReasonCodes, packets.CodeNoSubscriptionExisted.Code)
			}
		}
	}
	tc.writePacket(&out)
	return nil
}
