package loadgen

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"
)

// Packets whose remaining length takes one to three bytes, encoded with
// mochi's codec, come back whole through the reader, also when its buffer
// is smaller than a packet.
func TestRemainingLengthBoundaries(t *testing.T) {
	const topic = "t"
	overhead := 2 + len(topic) + 2 // topic length, topic, packet id
	for _, n := range []int{overhead, 127, 128, 16383, 16384, 1 << 16} {
		b, err := AppendPublish(nil, topic, 1, 9, make([]byte, n-overhead))
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		switch {
		case n >= 16384:
			want = 3
		case n >= 128:
			want = 2
		}
		if got := len(b) - n - 1; got != want {
			t.Errorf("remaining length %d encoded in %d bytes, want %d", n, got, want)
		}
		fh, body, err := NewReader(bytes.NewReader(b), 64, 1<<17).Next()
		if err != nil || len(body) != n || fh.Remaining != n {
			t.Errorf("remaining length %d: decoded %d bytes (header %d), err %v", n, len(body), fh.Remaining, err)
		}
	}
}

func TestPublishRoundTrip(t *testing.T) {
	payload := []byte(`{"lat":52.5,"lon":13.4,"ts":1764583200123,"acc":8.5}`)
	var stream []byte
	for _, p := range []struct {
		topic   string
		qos     byte
		id      uint16
		payload []byte
	}{
		{"devices/t1/telemetry", 0, 0, payload},
		{"devices/t2/telemetry", 1, 65535, payload},
		{strings.Repeat("x", 300), 1, 7, bytes.Repeat([]byte("y"), 200)}, // two-byte length
	} {
		var err error
		if stream, err = AppendPublish(stream, p.topic, p.qos, p.id, p.payload); err != nil {
			t.Fatal(err)
		}
	}
	stream = AppendPuback(stream, 42)
	r := NewReader(bytes.NewReader(stream), 16, 1<<16) // smaller than a packet: reads span refills
	for i, want := range []struct {
		topic string
		qos   byte
		id    uint16
		size  int
	}{{"devices/t1/telemetry", 0, 0, len(payload)}, {"devices/t2/telemetry", 1, 65535, len(payload)}, {strings.Repeat("x", 300), 1, 7, 200}} {
		fh, body, err := r.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		p, err := ParsePublish(fh, body)
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		if p.TopicName != want.topic || p.FixedHeader.Qos != want.qos || p.PacketID != want.id || len(p.Payload) != want.size || p.FixedHeader.Retain {
			t.Errorf("packet %d = topic %q qos %d id %d payload %d bytes, want %+v", i, p.TopicName, p.FixedHeader.Qos, p.PacketID, len(p.Payload), want)
		}
	}
	fh, body, err := r.Next()
	if err != nil || fh.Type != packets.Puback {
		t.Fatalf("PUBACK: header %+v, %v", fh, err)
	}
	if id, err := ParseID(fh, body); err != nil || id != 42 {
		t.Errorf("PUBACK id %d, %v", id, err)
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last packet: %v, want io.EOF", err)
	}
	if _, err := AppendPublish(nil, "t", 1, 0, nil); err == nil {
		t.Error("QoS 1 PUBLISH with packet id 0 encoded, want an error")
	}
}

// The bytes on the wire are MQTT 3.1.1's, as the specification spells
// them out.
func TestConnectAndSubscribeBytes(t *testing.T) {
	// MQTT 3.1.1 §3.1: the CONNECT of client "c1", clean session, keepalive 60.
	want := []byte{0x10, 14, 0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 60, 0, 2, 'c', '1'}
	if got, err := AppendConnect(nil, "c1", 60); err != nil || !bytes.Equal(got, want) {
		t.Errorf("CONNECT = % x, %v; want % x", got, err, want)
	}
	// §3.8: SUBSCRIBE id 1 to "a/#" at QoS 1; the fixed header's flags are 0010.
	want = []byte{0x82, 8, 0, 1, 0, 3, 'a', '/', '#', 1}
	if got, err := AppendSubscribe(nil, 1, "a/#", 1); err != nil || !bytes.Equal(got, want) {
		t.Errorf("SUBSCRIBE = % x, %v; want % x", got, err, want)
	}
	if got := AppendPuback(nil, 0x1234); !bytes.Equal(got, []byte{0x40, 2, 0x12, 0x34}) {
		t.Errorf("PUBACK = % x", got)
	}
	if got := AppendDisconnect(nil); !bytes.Equal(got, []byte{0xe0, 0}) {
		t.Errorf("DISCONNECT = % x", got)
	}
	if got := AppendPingreq(nil); !bytes.Equal(got, []byte{0xc0, 0}) {
		t.Errorf("PINGREQ = % x", got)
	}
	code, err := NewReader(bytes.NewReader([]byte{0x20, 2, 0, 5}), 16, 16).ReadConnack()
	if err != nil || code != 5 {
		t.Errorf("CONNACK code %d, %v; want 5", code, err)
	}
	r := NewReader(bytes.NewReader([]byte{0x90, 3, 0, 1, 0x80}), 16, 16)
	fh, body, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if codes, err := ParseSuback(fh, body); err != nil || !bytes.Equal(codes, []byte{0x80}) {
		t.Errorf("SUBACK codes % x, %v; want 80", codes, err)
	}
}

func TestDecoderRefusesMalformed(t *testing.T) {
	for name, in := range map[string][]byte{
		"five-byte length": {0x30, 0xff, 0xff, 0xff, 0xff, 0x01},
		"over the limit":   {0x30, 0x80, 0x01}, // 128 > 100
		"QoS 3":            {0x36, 0},
	} {
		_, _, err := NewReader(bytes.NewReader(in), 16, 100).Next()
		if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v, want a decode error", name, err)
		}
	}
	if _, _, err := NewReader(bytes.NewReader([]byte{0x30, 5, 0}), 16, 100).Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: %v, want io.ErrUnexpectedEOF", err)
	}
	qos1 := packets.FixedHeader{Type: packets.Publish, Qos: 1}
	for name, body := range map[string][]byte{
		"no topic length":  {0},
		"topic too long":   {0, 9, 'a'},
		"qos 1 without id": {0, 1, 'a', 0},
	} {
		qos1.Remaining = len(body)
		if _, err := ParsePublish(qos1, body); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func TestIDArithmeticSkipsZero(t *testing.T) {
	if got := idAdd(65535, 1); got != 1 {
		t.Errorf("65535 + 1 = %d, want 1", got)
	}
	if got := idDist(65534, 2); got != 3 {
		t.Errorf("distance 65534 → 2 = %d, want 3 (65535, 1, 2)", got)
	}
	if got := idDist(5, 5); got != 0 {
		t.Errorf("distance 5 → 5 = %d, want 0", got)
	}
}
