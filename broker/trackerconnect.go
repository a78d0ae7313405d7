package broker

import (
	"bytes"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

// connect handles the first packet, which must be CONNECT: it logs the
// client in as the MQTT listener would, takes over its client id and
// answers CONNACK. Not inlined: its packet would sit in the frame of
// every read, and deepen each connection's stack.
//
//go:noinline
func (tc *trackerConn) connect(b []byte, hdr int) error {
	t := tc.t
	var pk packets.Packet
	if b[0] != packets.Connect<<4 {
		return closeFor(closedProtocol) // [MQTT-3.1.0-1]: no answer
	}
	// mochi's decoder returns views of the buffer, strings too; the read
	// buffer is reused, and the client id, username and will are kept.
	b = bytes.Clone(b)
	if tc.promote {
		tc.hello = b
	}
	pk.FixedHeader = packets.FixedHeader{Type: packets.Connect, Remaining: len(b) - hdr}
	if err := pk.ConnectDecode(b[hdr:]); err != nil {
		return closeFor(closedProtocol)
	}
	tc.v5 = pk.ProtocolVersion == 5
	if code := pk.ConnectValidate(); code != packets.CodeSuccess {
		if tc.promote {
			return promote() // mochi refuses it its own way
		}
		if code == packets.ErrProtocolViolationProtocolVersion {
			tc.connack(packets.ErrUnsupportedProtocolVersion, nil) // [MQTT-3.1.2-2]
		}
		return closeFor(closedProtocol)
	}
	c := &pk.Connect
	if tc.promote && tc.needsMochi(&pk) {
		return promote()
	}
	if !tc.v5 && !c.Clean && c.ClientIdentifier == "" {
		return tc.refuse(packets.ErrClientIdentifierNotValid, closedProtocol) // [MQTT-3.1.3-8]
	}
	if tc.v5 && pk.Properties.AuthenticationMethod != "" {
		return tc.refuse(packets.ErrBadAuthenticationMethod, closedProtocol) // no enhanced authentication here
	}
	if atomic.LoadInt64(&t.srv.Info.ClientsConnected) >= t.cfg.MaxConnections {
		return tc.refuse(packets.ErrServerBusy, closedLimit)
	}
	if !t.access.Login(string(c.Username), c.Password, tc.remote) {
		return tc.refuse(packets.ErrBadUsernameOrPassword, closedBadLogin)
	}
	tc.user = c.Username
	if c.WillFlag {
		name := []byte(c.WillTopic)
		switch {
		case len(name) > 0 && name[0] == '$' || plainTopic(name) && !t.access.Allows(tc.user, c.WillTopic, true):
			return tc.refuse(packets.ErrNotAuthorized, closedNotAuthorized)
		case !plainTopic(name):
			return tc.refuse(packets.ErrTopicNameInvalid, closedProtocol)
		}
		tc.will = &packets.Packet{
			FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: c.WillQos, Retain: c.WillRetain},
			TopicName:   c.WillTopic,
			Payload:     c.WillPayload,
			Properties: packets.Properties{
				User:                  c.WillProperties.User,
				MessageExpiryInterval: c.WillProperties.MessageExpiryInterval,
				ContentType:           c.WillProperties.ContentType,
				PayloadFormat:         c.WillProperties.PayloadFormat,
				PayloadFormatFlag:     c.WillProperties.PayloadFormatFlag,
			},
		}
	}
	props := &packets.Properties{}
	tc.id = c.ClientIdentifier
	if tc.id == "" {
		tc.id = "tracker-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.FormatUint(t.assigned.Add(1), 36)
		props.AssignedClientID = tc.id // [MQTT-3.2.2-16]
		tc.assigned = true
	}
	if c.Keepalive > 0 {
		tc.span = time.Duration(c.Keepalive) * 1500 * time.Millisecond // [MQTT-3.1.2-22]
	}
	tc.expiry = pk.Properties.SessionExpiryInterval
	if !t.register(tc) {
		return closeFor("") // shutting down
	}
	tc.ok = true
	tc.tell.Store(tc.v5)
	t.info.connected.Add(1)
	atomic.AddInt64(&t.srv.Info.ClientsConnected, 1)
	tc.connack(packets.CodeSuccess, props)
	if tc.span == 0 {
		_ = tc.c.SetReadDeadline(time.Time{}) // the connect timeout's
	}
	tc.refreshDeadline()
	return nil
}

// refuse refuses the CONNECT with code, counted under why; on the MQTT
// listener mochi refuses it, as it would have without the tracker path.
func (tc *trackerConn) refuse(code packets.Code, why string) error {
	if tc.promote {
		return promote()
	}
	tc.connack(code, nil)
	return closeFor(why)
}

// needsMochi reports whether a CONNECT on the MQTT listener needs mochi
// from the start: a session mochi keeps for its client id (mochi resumes
// or clears it), or a will to be sent later than the connection's end.
func (tc *trackerConn) needsMochi(pk *packets.Packet) bool {
	if pk.Connect.WillFlag && pk.Connect.WillProperties.WillDelayInterval > 0 {
		return true
	}
	if id := pk.Connect.ClientIdentifier; id != "" {
		if _, ok := tc.t.srv.Clients.Get(id); ok {
			return true
		}
	}
	return false
}

// connack answers CONNACK with code: 3.1.1 clients get the 3.1.1 form of
// a refusal. A successful MQTT 5 one says what the listener does not do.
func (tc *trackerConn) connack(code packets.Code, props *packets.Properties) {
	out := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connack}, ProtocolVersion: 4}
	if tc.v5 {
		out.ProtocolVersion = 5
	}
	if props != nil {
		out.Properties = *props
	}
	if code.Code >= packets.ErrUnspecifiedError.Code && !tc.v5 {
		c3, ok := connackCodes3[code.Code]
		if !ok {
			return // no 3.1.1 code says it: the connection just closes
		}
		code = packets.Code{Code: c3}
	}
	out.ReasonCode = code.Code
	if tc.v5 {
		p := &out.Properties
		if code.Code >= packets.ErrUnspecifiedError.Code {
			p.ReasonString = code.Reason
		} else if caps := tc.t.srv.Options.Capabilities; tc.promote {
			// What mochi says: the client may subscribe, and mochi will
			// serve it then.
			p.ReceiveMaximum = caps.ReceiveMaximum
			if caps.MaximumQos < 2 {
				p.MaximumQos, p.MaximumQosFlag = caps.MaximumQos, true
			}
			if tc.expiry > caps.MaximumSessionExpiryInterval {
				p.SessionExpiryInterval, p.SessionExpiryIntervalFlag = caps.MaximumSessionExpiryInterval, true
			}
		} else {
			p.MaximumQos, p.MaximumQosFlag = 1, true
			p.WildcardSubAvailable, p.WildcardSubAvailableFlag = 0, true
			p.SubIDAvailable, p.SubIDAvailableFlag = 0, true
			p.SharedSubAvailable, p.SharedSubAvailableFlag = 0, true
			p.TopicAliasMaximum = caps.TopicAliasMaximum
			p.ReceiveMaximum = caps.ReceiveMaximum
			p.MaximumPacketSize = tc.t.cfg.MaxPacketSize
		}
	}
	tc.writePacket(&out)
}

// connackCodes3 are the 3.1.1 CONNACK return codes of the MQTT 5 reason
// codes the listener refuses a connection with.
var connackCodes3 = map[byte]byte{
	packets.ErrUnsupportedProtocolVersion.Code: 0x01,
	packets.ErrClientIdentifierNotValid.Code:   0x02,
	packets.ErrServerBusy.Code:                 0x03,
	packets.ErrBadUsernameOrPassword.Code:      0x04,
	packets.ErrNotAuthorized.Code:              0x05,
}

// publishSlow handles a PUBLISH with properties or RETAIN: decoded whole
// by mochi's decoder, topic aliases resolved. Not inlined, for the
// connection's stack (see connect).
//
//go:noinline
func (tc *trackerConn) publishSlow(b []byte, hdr int) error {
	pk := packets.Packet{ProtocolVersion: 4}
	if tc.v5 {
		pk.ProtocolVersion = 5
	}
	// mochi's decoder returns views of the buffer, strings too, and mochi
	// keeps what it is given (a retained message, a queued one).
	b = bytes.Clone(b)
	_ = pk.FixedHeader.Decode(b[0]) // QoS and flags were checked
	pk.FixedHeader.Remaining = len(b) - hdr
	if err := pk.PublishDecode(b[hdr:]); err != nil {
		tc.disconnect(packets.ErrMalformedPacket)
		return closeFor(closedProtocol)
	}
	caps := tc.t.srv.Options.Capabilities
	if code := pk.PublishValidate(caps.TopicAliasMaximum); code != packets.CodeSuccess {
		tc.disconnect(code)
		return closeFor(closedProtocol)
	}
	a := pk.Properties.TopicAlias
	set := pk.Properties.TopicAliasFlag && a > 0 && pk.TopicName != ""
	if pk.Properties.TopicAliasFlag && a > 0 && pk.TopicName == "" {
		if pk.TopicName = tc.aliases[a]; pk.TopicName == "" {
			tc.disconnect(packets.ErrTopicAliasInvalid) // [MQTT-3.3.2-7]: an alias never set
			return closeFor(closedProtocol)
		}
	}
	// The alias is this connection's: mochi must not see it.
	pk.Properties.TopicAlias, pk.Properties.TopicAliasFlag = 0, false
	name := []byte(pk.TopicName)
	if !plainTopic(name) {
		return tc.badTopic(name, pk.FixedHeader.Qos, pk.PacketID)
	}
	if set {
		// A topic the client may not publish on gets no alias, and an
		// alias is not moved to one: as on the MQTT listener.
		if !tc.t.access.Allows(tc.user, pk.TopicName, true) {
			return tc.notAuthorized(pk.TopicName, pk.FixedHeader.Qos, pk.PacketID)
		}
		if tc.aliases == nil {
			tc.aliases = map[uint16]string{}
		}
		tc.aliases[a] = strings.Clone(pk.TopicName) // not the whole packet's buffer
	}
	return tc.deliver(tc.topics.intern(name), pk.Payload, pk.FixedHeader.Qos, pk.PacketID, &pk)
}

// forward publishes what is not only a ping through mochi, from the
// listener's inline client: subscribers, retained messages and the store
// see it as any client's. full carries RETAIN and MQTT 5 properties.
func (tc *trackerConn) forward(topic string, body []byte, qos byte, full *packets.Packet) {
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: qos}, TopicName: topic}
	if full != nil {
		pk.FixedHeader.Retain = full.FixedHeader.Retain
		pk.Properties = full.Properties
	}
	// mochi keeps the payload of a retained or queued message: it must
	// not be a view of the read buffer (publishSlow's is a copy already).
	pk.Payload = body
	if full == nil {
		pk.Payload = bytes.Clone(body)
	}
	tc.inject(pk)
}

// inject hands pk to mochi from the inline client. A will is published
// at once: the MQTT 5 will delay is not kept, the listener keeping no
// session to cancel it with.
func (tc *trackerConn) inject(pk packets.Packet) {
	if pk.FixedHeader.Qos > 0 {
		pk.PacketID = 1 // mochi validates it; the inline path never acks
	}
	pk.Origin = tc.id
	if err := tc.t.srv.InjectPacket(tc.t.inline, pk); err != nil {
		tc.t.log.Warn("tracker listener: publish through the broker failed", "client", tc.id, "topic", pk.TopicName, "error", err)
	}
}

// ack answers a QoS 1 publish: the four bytes mochi writes for reason 0,
// or, for MQTT 5, the reason code with its reason string, as mochi writes
// it.
func (tc *trackerConn) ack(id uint16, code packets.Code) {
	if code.Code == 0 {
		tc.write(packets.Puback<<4, 2, byte(id>>8), byte(id))
		return
	}
	if !tc.v5 {
		return
	}
	tc.writeRefusal(id, code)
}

// acked acknowledges a QoS 1 publish that was taken; an MQTT 5 one with
// user properties gets them back, as mochi answers.
func (tc *trackerConn) acked(id uint16, full *packets.Packet) {
	if full == nil || !tc.v5 || len(full.Properties.User) == 0 {
		tc.ack(id, packets.CodeSuccess)
		return
	}
	tc.writePacket(&packets.Packet{
		FixedHeader:     packets.FixedHeader{Type: packets.Puback},
		ProtocolVersion: 5,
		PacketID:        id,
		Properties:      packets.Properties{User: full.Properties.User},
	})
}

// writeRefusal adds an MQTT 5 PUBACK with a reason code. Not inlined: its
// packet would sit in the frame of every read.
//
//go:noinline
func (tc *trackerConn) writeRefusal(id uint16, code packets.Code) {
	tc.writePacket(&packets.Packet{
		FixedHeader:     packets.FixedHeader{Type: packets.Puback},
		ProtocolVersion: 5,
		PacketID:        id,
		ReasonCode:      code.Code,
		Properties:      packets.Properties{ReasonString: code.Reason},
	})
}

// write adds one packet's bytes to what the next flush writes.
func (tc *trackerConn) write(b ...byte) {
	tc.out = append(tc.out, b...)
	tc.outPkts++
}

// writePacket adds an encoded packet to what the next flush writes.
func (tc *trackerConn) writePacket(pk *packets.Packet) {
	var buf bytes.Buffer
	var err error
	switch pk.FixedHeader.Type {
	case packets.Connack:
		err = pk.ConnackEncode(&buf)
	case packets.Suback:
		err = pk.SubackEncode(&buf)
	case packets.Unsuback:
		err = pk.UnsubackEncode(&buf)
	case packets.Disconnect:
		err = pk.DisconnectEncode(&buf)
	case packets.Puback:
		err = pk.PubackEncode(&buf)
	}
	if err == nil {
		tc.write(buf.Bytes()...)
	}
}

// flush writes what the packets of one read were answered.
func (tc *trackerConn) flush() {
	if len(tc.out) == 0 {
		return
	}
	tc.wmu.Lock()
	n, err := tc.c.Write(tc.out)
	tc.wmu.Unlock()
	if err == nil {
		atomic.AddInt64(&tc.t.srv.Info.BytesSent, int64(n))
		atomic.AddInt64(&tc.t.srv.Info.PacketsSent, int64(tc.outPkts))
	}
	if cap(tc.out) > 4<<10 {
		tc.out = nil // a burst's answers: not kept for an idle tracker
	} else {
		tc.out = tc.out[:0]
	}
	tc.outPkts = 0
}

// disconnect adds an MQTT 5 DISCONNECT with code to what is written
// before the connection closes; MQTT 3.1.1 has none.
func (tc *trackerConn) disconnect(code packets.Code) {
	if !tc.v5 || !tc.ok {
		return
	}
	tc.writePacket(&packets.Packet{
		FixedHeader:     packets.FixedHeader{Type: packets.Disconnect},
		ProtocolVersion: 5,
		ReasonCode:      code.Code,
		Properties:      packets.Properties{ReasonString: code.Reason},
	})
}

// end closes the connection from another goroutine, for why, telling an
// MQTT 5 client code first if the connection's own write lets it within
// wait. The connection's own goroutine then finds the socket closed and
// ends.
func (tc *trackerConn) end(why string, code packets.Code, wait time.Duration) {
	if !tc.ending.CompareAndSwap(nil, why) {
		return
	}
	if tc.tell.Load() {
		var buf bytes.Buffer
		pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Disconnect}, ProtocolVersion: 5,
			ReasonCode: code.Code, Properties: packets.Properties{ReasonString: code.Reason}}
		// Not while the reader is writing: a client that stopped reading
		// can hold that write forever, and only the close below ends it.
		// A reader that has just written (a CONNACK the client has
		// already read) is waited for, briefly: it may have been
		// preempted before letting go of the lock.
		if pk.DisconnectEncode(&buf) == nil && tc.lockWrites(wait) {
			_ = tc.c.SetWriteDeadline(time.Now().Add(time.Second)) // nor this one
			_, _ = tc.c.Write(buf.Bytes())
			tc.wmu.Unlock()
		}
	}
	_ = tc.c.Close()
}

// takeoverWait bounds how long a takeover waits for the older
// connection's own write before closing it without a DISCONNECT. Shutdown
// does not wait: it closes every connection in turn.
const takeoverWait = 20 * time.Millisecond

// lockWrites takes the write lock if it comes free within d (0: only if
// it is free now).
func (tc *trackerConn) lockWrites(d time.Duration) bool {
	give := time.Now().Add(d)
	for !tc.wmu.TryLock() {
		if d <= 0 || time.Now().After(give) {
			return false
		}
		time.Sleep(100 * time.Microsecond)
	}
	return true
}

// takenOver closes a connection whose client id a newer one has taken
// [MQTT-3.1.4-3]; its will is published.
func (tc *trackerConn) takenOver() {
	tc.end(closedTakenOver, packets.ErrSessionTakenOver, takeoverWait)
}

// shutdown closes a connection as the server stops; no will is published.
func (tc *trackerConn) shutdown() { tc.end("shutdown", packets.ErrServerShuttingDown, 0) }
