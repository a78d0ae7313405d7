package broker_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

// trackerConnect is a clean-session CONNECT with keepalive 30 for client
// id, MQTT 3.1.1 or 5.
func trackerConnect(t testing.TB, id string, v5 bool) []byte {
	t.Helper()
	v := byte(4)
	if v5 {
		v = 5
	}
	pk := connectPacket(id, creds{}, 30)
	pk.Connect.ProtocolName = []byte("MQTT")
	b, err := encodePacket(v, pk)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzConnection sends a logged-in client's connection arbitrary bytes
// after its CONNECT. Whatever they are, the broker answers with one
// CONNACK and then only whole packets a server sends, in an order that
// makes sense (nothing after a DISCONNECT), ends the connection or keeps
// serving it, and serves the next client as before. Its seeds run in
// every go test; testdata/fuzz/FuzzConnection/truncated-v5-subscribe is
// the 12 bytes that panicked mochi (third_party/mochi-mqtt-server).
func FuzzConnection(f *testing.F) {
	fuzzConnection(f, func(typ byte) bool {
		return typ != packets.Connect && typ != packets.Connack && typ != packets.Subscribe &&
			typ != packets.Unsubscribe && typ != packets.Pingreq && typ != 0
	})
}

// fuzzConnection is a fuzz target sending a connection to the MQTT
// listener arbitrary bytes after CONNECT; answers reports whether a packet
// type may follow the CONNACK.
func fuzzConnection(f *testing.F, answers func(typ byte) bool) {
	ping := []byte(`{"lat":52.52,"lon":13.4,"ts":1700000000000}`)
	pub := func(qos byte, topic string, payload []byte, v5 bool) []byte {
		body := []byte{byte(len(topic) >> 8), byte(len(topic))}
		body = append(body, topic...)
		if qos > 0 {
			body = append(body, 0, 7)
		}
		if v5 {
			body = append(body, 0)
		}
		body = append(body, payload...)
		return append([]byte{0x30 | qos<<1, byte(len(body))}, body...)
	}
	f.Add(false, pub(1, "devices/f1/telemetry", ping, false))
	f.Add(true, pub(1, "devices/f1/telemetry", ping, true))
	f.Add(false, append(pub(0, "devices/f1/status", []byte("up"), false), 0xc0, 0))
	f.Add(true, []byte{0x82, 0x0a, 0, 1, 0, 0, 4, 'a', '/', '#', 0, 0})     // SUBSCRIBE
	f.Add(false, []byte{0xa2, 0x05, 0, 2, 0, 1, 'x'})                       // UNSUBSCRIBE
	f.Add(true, []byte{0x34, 0x07, 0, 1, 'x', 0, 1, 0, 'y'})                // QoS 2
	f.Add(true, []byte{0x32, 0x0b, 0, 0, 0, 9, 3, 0x23, 0, 1, '{', '}', 0}) // alias never set
	f.Add(false, []byte{0x30, 0xff, 0xff, 0xff, 0xff, 0x01})                // malformed length
	f.Add(true, []byte{0xe0, 0x01, 0x04})                                   // DISCONNECT with will
	f.Add(false, append(pub(1, "$SYS/x", nil, false), pub(1, "devices/f2/telemetry", []byte("{"), false)...))

	cfg := testConfig(f)
	cfg.ConnectTimeout = time.Second
	srv := start(f, cfg)
	n := 0
	f.Fuzz(func(t *testing.T, v5 bool, data []byte) {
		n++
		// Each exec's connection ends in TIME_WAIT on this side (it closes
		// first): from a source address of its own in 127/8, thousands of
		// execs a second do not use up the ports of one.
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 1+byte(n>>16), byte(n>>8), byte(n))}}
		c, err := d.Dial("tcp", srv.MQTTAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(wait))
		if _, err := c.Write(trackerConnect(t, fmt.Sprintf("fz%d", n%50), v5)); err != nil {
			t.Fatal(err)
		}
		_, _ = c.Write(data) // the broker may have closed already
		// Done sending: the broker reads to the end of what was sent, then
		// finds the stream closed and ends the connection.
		_ = c.(*net.TCPConn).CloseWrite()
		got, err := io.ReadAll(c)
		// The broker closing a socket with input unread in it resets it.
		if err != nil && !isReset(err) {
			t.Fatalf("reading the broker's answers: %v (got % x)", err, got)
		}
		checkAnswers(t, got, answers)

		// The broker still serves a tracker.
		next, err := net.Dial("tcp", srv.MQTTAddr())
		if err != nil {
			t.Fatal(err)
		}
		defer next.Close()
		_ = next.(*net.TCPConn).SetLinger(0)
		_ = next.SetDeadline(time.Now().Add(wait))
		msg := append(trackerConnect(t, "fz-next", v5), 0xc0, 0)
		if _, err := next.Write(msg); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 64)
		have := 0
		for have < 2 || !bytes.HasSuffix(b[:have], []byte{0xd0, 0}) {
			m, err := next.Read(b[have:])
			if err != nil {
				t.Fatalf("the next tracker got % x, then %v; want CONNACK and PINGRESP", b[:have], err)
			}
			have += m
		}
	})
}

// checkAnswers checks that b is whole packets: CONNACK first and only
// then, types allowed by answers, and at most one DISCONNECT, last.
func checkAnswers(t *testing.T, b []byte, answers func(typ byte) bool) {
	t.Helper()
	for i := 0; len(b) > 0; i++ {
		rem, shift, hdr := 0, 0, 1
		for ; ; hdr++ {
			if hdr >= len(b) || hdr > 4 {
				t.Fatalf("answer %d: a cut or malformed length: % x", i, b)
			}
			rem |= int(b[hdr]&0x7f) << shift
			shift += 7
			if b[hdr]&0x80 == 0 {
				break
			}
		}
		size := hdr + 1 + rem
		if size > len(b) {
			t.Fatalf("answer %d: %d bytes of a %d-byte packet: % x", i, len(b), size, b)
		}
		typ := b[0] >> 4
		switch {
		case i == 0 && typ != 2:
			t.Fatalf("first answer is type %d, want CONNACK: % x", typ, b)
		case i > 0 && typ == 2:
			t.Fatalf("answer %d: a second CONNACK", i)
		case typ == 14 && size != len(b):
			t.Fatalf("answer %d: DISCONNECT, then more: % x", i, b[size:])
		case i > 0 && typ != packets.Disconnect && !answers(typ):
			t.Fatalf("answer %d: type %d, which the server does not send here", i, typ)
		}
		b = b[size:]
	}
}
