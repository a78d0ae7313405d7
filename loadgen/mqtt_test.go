package loadgen

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestRemainingLengthBoundaries(t *testing.T) {
	for _, n := range []int{0, 1, 127, 128, 16383, 16384, 2097151, 2097152, maxRemaining} {
		b := appendLength(nil, n)
		want := 1
		switch {
		case n >= 2097152:
			want = 4
		case n >= 16384:
			want = 3
		case n >= 128:
			want = 2
		}
		if len(b) != want {
			t.Errorf("length %d encoded in %d bytes, want %d", n, len(b), want)
		}
		// Decode it back through a packet header.
		if n > 1<<16 {
			continue
		}
		pk := append([]byte{typePuback << 4}, b...)
		pk = append(pk, make([]byte, n)...)
		_, body, err := NewReader(bytes.NewReader(pk), 64, 1<<16).Next()
		if err != nil || len(body) != n {
			t.Errorf("length %d: decoded %d bytes, err %v", n, len(body), err)
		}
	}
}

func TestPublishRoundTrip(t *testing.T) {
	payload := []byte(`{"lat":52.5,"lon":13.4,"ts":1764583200123,"acc":8.5}`)
	var stream []byte
	stream = AppendPublish(stream, "devices/t1/telemetry", 0, 0, payload)
	stream = AppendPublish(stream, "devices/t2/telemetry", 1, 65535, payload)
	stream = AppendPublish(stream, strings.Repeat("x", 300), 1, 7, bytes.Repeat([]byte("y"), 200)) // two-byte length
	stream = AppendPuback(stream, 42)
	r := NewReader(bytes.NewReader(stream), 16, 1<<16) // smaller than a packet: reads span refills
	for i, want := range []struct {
		topic string
		qos   byte
		id    uint16
		size  int
	}{{"devices/t1/telemetry", 0, 0, len(payload)}, {"devices/t2/telemetry", 1, 65535, len(payload)}, {strings.Repeat("x", 300), 1, 7, 200}} {
		hdr, body, err := r.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		p, err := ParsePublish(hdr, body)
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		if string(p.Topic) != want.topic || p.QoS != want.qos || p.ID != want.id || len(p.Payload) != want.size || p.Retain {
			t.Errorf("packet %d = topic %q qos %d id %d payload %d bytes, want %+v", i, p.Topic, p.QoS, p.ID, len(p.Payload), want)
		}
	}
	hdr, body, err := r.Next()
	if err != nil || hdr>>4 != typePuback {
		t.Fatalf("PUBACK: header %#x, %v", hdr, err)
	}
	if id, err := ParseID(body); err != nil || id != 42 {
		t.Errorf("PUBACK id %d, %v", id, err)
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last packet: %v, want io.EOF", err)
	}
}

func TestConnectAndSubscribeBytes(t *testing.T) {
	// MQTT 3.1.1 §3.1: the CONNECT of client "c1", clean session, keepalive 60.
	want := []byte{0x10, 14, 0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 60, 0, 2, 'c', '1'}
	if got := AppendConnect(nil, "c1", 60); !bytes.Equal(got, want) {
		t.Errorf("CONNECT = % x, want % x", got, want)
	}
	// §3.8: SUBSCRIBE id 1 to "a/#" at QoS 1; the fixed header's flags are 0010.
	want = []byte{0x82, 8, 0, 1, 0, 3, 'a', '/', '#', 1}
	if got := AppendSubscribe(nil, 1, "a/#", 1); !bytes.Equal(got, want) {
		t.Errorf("SUBSCRIBE = % x, want % x", got, want)
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
}

func TestDecoderRefusesMalformed(t *testing.T) {
	for name, in := range map[string][]byte{
		"five-byte length": {0x30, 0xff, 0xff, 0xff, 0xff, 0x01},
		"over the limit":   {0x30, 0x80, 0x01}, // 128 > 100
	} {
		_, _, err := NewReader(bytes.NewReader(in), 16, 100).Next()
		if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v, want a decode error", name, err)
		}
	}
	if _, _, err := NewReader(bytes.NewReader([]byte{0x30, 5, 0}), 16, 100).Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated: %v, want io.ErrUnexpectedEOF", err)
	}
	for name, body := range map[string][]byte{
		"no topic length":  {0},
		"topic too long":   {0, 9, 'a'},
		"qos 1 without id": {0, 1, 'a', 0},
	} {
		if _, err := ParsePublish(typePublish<<4|1<<1, body); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
	if _, err := ParsePublish(typePublish<<4|3<<1, []byte{0, 1, 'a'}); !errors.Is(err, ErrMalformed) {
		t.Errorf("QoS 3: %v, want ErrMalformed", err)
	}
}

func TestWalkCrossesTheEdgeOncePerSide(t *testing.T) {
	fs := GenerateFences(4)
	for _, f := range fs {
		w := walk(&f, 3, 5)
		if len(w) != 10 {
			t.Fatalf("fence %s: %d positions, want 10", f.ID, len(w))
		}
	}
	if fs[0].Sides != 0 || fs[1].Sides == 0 {
		t.Errorf("want a circle then a polygon, got %d and %d sides", fs[0].Sides, fs[1].Sides)
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

func TestParseMetrics(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader("# HELP x\nedgefence_pings_received_total 12\nedgefence_shed_total{stage=\"queue\"} 3\ngo_gc_cpu_seconds_total 0.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m["edgefence_pings_received_total"] != 12 || m[`edgefence_shed_total{stage="queue"}`] != 3 || !m.Has("go_gc_cpu_seconds_total") {
		t.Errorf("parsed %v", m)
	}
}
