package broker_test

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mochi-mqtt/server/v2/packets"
)

// encode5 encodes an MQTT 5 packet with mochi's codec.
func encode5(t *testing.T, pk packets.Packet) []byte {
	t.Helper()
	pk.ProtocolVersion = 5
	var buf bytes.Buffer
	var err error
	switch pk.FixedHeader.Type {
	case packets.Connect:
		err = pk.ConnectEncode(&buf)
	case packets.Publish:
		err = pk.PublishEncode(&buf)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Whatever arrives on the MQTT port, the broker closes the connection
// (at once, or when the CONNECT deadline or the keepalive runs out),
// routes none of it, and goes on serving everyone else.
func TestGarbageOnTheMQTTPort(t *testing.T) {
	cfg := testConfig(t)
	cfg.ConnectTimeout = 300 * time.Millisecond
	cfg.MaxPacketSize = 8 << 10
	cfg.MaxPayload = 1024
	cfg.WSAddr = "127.0.0.1:0"
	srv := start(t, cfg)
	addr := srv.MQTTAddr()
	observer := connect5(t, addr, "observer")
	observer.Subscribe("#")

	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	connect := encode5(t, packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Connect},
		Connect:     packets.ConnectParams{ProtocolName: []byte("MQTT"), ClientIdentifier: "garbage", Clean: true, Keepalive: 1},
	})
	publish := encode5(t, packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1},
		TopicName:   "devices/garbage-1/telemetry",
		PacketID:    7,
		Payload:     canonical(museumLat, museumLon, nowMs()),
	})
	// PUBLISH QoS 1 on a topic of 4 bytes that are not UTF-8.
	badTopic := []byte{0x32, 0, 0, 0x04, 0xff, 0xfe, 0xc3, 0x28, 0x00, 0x09, 0x00}
	badTopic[1] = byte(len(badTopic) - 2)
	// A remaining length of 1 MiB (varint 0x80 0x80 0x40), above the 8 KiB limit.
	huge := append([]byte{0x80, 0x80, 0x40}, bytes.Repeat([]byte{'x'}, 100)...)

	cases := []struct {
		name    string
		connect bool // send a good CONNECT (keepalive 1 s) first
		send    []byte
	}{
		{"random bytes", false, random},
		{"PUBLISH before CONNECT", false, publish},
		{"truncated CONNECT", false, connect[:len(connect)/2]},
		{"CONNECT above the packet size limit", false, append([]byte{0x10}, huge...)},
		{"malformed remaining length", false, []byte{0x10, 0xff, 0xff, 0xff, 0xff, 0x01}},
		{"CONNECT with a garbage body", false, append([]byte{0x10, 0x0a}, random[:10]...)},
		{"nothing at all", false, nil},
		{"truncated PUBLISH", true, publish[:len(publish)-5]},
		{"PUBLISH with an invalid UTF-8 topic", true, badTopic},
		{"PUBLISH above the packet size limit", true, append([]byte{0x32}, huge...)},
		{"PUBLISH with QoS 3", true, append([]byte{0x36}, publish[1:]...)},
		{"QoS 1 PUBLISH without a packet id", true, zeroPacketID(t, encode5(t, packets.Packet{
			FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1},
			TopicName:   "devices/garbage-2/telemetry",
			PacketID:    9,
			Payload:     canonical(museumLat, museumLon, nowMs()),
		}))},
		{"PUBLISH with a wildcard topic", true, encode5(t, packets.Packet{
			FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 0},
			TopicName:   "devices/+/telemetry",
			Payload:     canonical(museumLat, museumLon, nowMs()),
		})},
		{"a second CONNECT", true, connect},
		{"reserved packet type 0", true, []byte{0x00, 0x00}},
		{"random bytes after CONNECT", true, random},
	}
	type conn struct {
		r  *rawClient
		t0 time.Time
	}
	conns := make([]conn, len(cases))
	for i, c := range cases {
		r := rawDial(t, addr)
		conns[i] = conn{r, time.Now()}
		if c.connect {
			if rc, err := r.connect("garbage-"+itoa(int64(i)), anonymous, 1); err != nil || rc != 0 {
				t.Fatalf("%s: CONNECT: %#x %v", c.name, rc, err)
			}
		}
		_ = r.write(c.send) // the broker may hang up mid-write
	}
	// All are being handled at once; each must end within the bound.
	for i, c := range cases {
		took, got := conns[i].r.closedByServer(t, c.name, wait)
		t.Logf("%-40s closed by the broker %v after the garbage (%d bytes back)", c.name, took.Round(time.Millisecond), len(got))
		if c.name == "nothing at all" {
			t.Logf("an idle connection lived %v (ConnectTimeout %v)", time.Since(conns[i].t0).Round(time.Millisecond), cfg.ConnectTimeout)
		}
		// Nothing but a refusal comes back: no CONNACK that admits, no
		// PUBACK; at most a DISCONNECT (MQTT 5) saying why.
		if len(got) > 0 {
			switch got[0] >> 4 {
			case packets.Connack:
				if c.connect || len(got) < 4 || got[3] < 0x80 {
					t.Errorf("%s: got % x, want no CONNACK or a refusal", c.name, got)
				}
			case packets.Disconnect:
				if !c.connect {
					t.Errorf("%s: DISCONNECT before CONNECT", c.name)
				}
			default:
				t.Errorf("%s: got % x, want nothing or a DISCONNECT", c.name, got)
			}
		}
	}

	// MQTT over WebSocket carries binary messages: a text message ends
	// the connection; so does a request that is not a WebSocket upgrade.
	ws, err := dialWS("ws://"+srv.WSAddr()+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.ws.WriteMessage(websocket.TextMessage, connect); err != nil {
		t.Fatal(err)
	}
	_ = ws.SetReadDeadline(time.Now().Add(wait))
	if _, _, err := ws.ws.ReadMessage(); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Errorf("text message over WebSocket: %v, want the connection closed", err)
	}
	ws.Close()
	if code, _ := httpGet(t, "http://"+srv.WSAddr()+"/"); code != http.StatusBadRequest {
		t.Errorf("plain GET on the WebSocket port: status %d, want 400", code)
	}

	// A telemetry payload over --max-payload (but within the packet size)
	// is refused with 0x99 and reported; the connection stays.
	dash := connect5(t, addr, "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect5(t, addr, "tracker")
	big := `{"lat":52.52,"lon":13.4,"pad":"` + strings.Repeat("p", 2000) + `"}`
	if rc := tracker.Publish("devices/big-1/telemetry", 1, []byte(big)); rc != 0x99 {
		t.Errorf("payload of %d bytes over max 1024: PUBACK %#x, want 0x99", len(big), rc)
	}
	if v := metric(t, srv, `edgefence_rejected_total{reason="too_large"}`); v != 1 {
		t.Errorf(`edgefence_rejected_total{reason="too_large"} = %v, want 1`, v)
	}

	// After all of it the broker serves as before.
	tracker.ping("after-garbage", museumLat, museumLon, nowMs()-10_000)
	expectTransitions(t, dash, "ENTER zone-museumsinsel after-garbage")
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _ := httpGet(t, "http://"+srv.HTTPAddr()+path); code != http.StatusOK {
			t.Errorf("%s: status %d after the garbage", path, code)
		}
	}
	// Nothing of the garbage was routed: the observer saw the oversized
	// payload's reject report, the good ping and its transition only.
	tracker.flush() // routes what the tracker sent before (not the flush itself)
	var topics, routed []string
	for _, m := range observer.Sync() {
		topics = append(topics, m.Topic)
		if !strings.HasPrefix(m.Topic, "geofence/") && m.Topic != "edgefence-test/flush" {
			routed = append(routed, m.Topic)
		}
	}
	// The reject report goes through the publisher's queue and the good
	// ping is routed by mochi at once, so either may come first.
	slices.Sort(routed)
	want := []string{"devices/after-garbage/telemetry", "edgefence/rejected/big-1"}
	if !slices.Equal(routed, want) {
		t.Errorf("observer got %q, want %q (and the transition)", topics, want)
	}
}

// zeroPacketID sets the packet id of an encoded QoS 1 PUBLISH (remaining
// length below 128) to 0, which mochi's encoder will not write.
func zeroPacketID(t *testing.T, b []byte) []byte {
	t.Helper()
	if b[1] >= 0x80 {
		t.Fatal("zeroPacketID: remaining length over one byte")
	}
	topicLen := int(b[2])<<8 | int(b[3])
	i := 4 + topicLen
	if b[i] != 0 || b[i+1] != 9 {
		t.Fatalf("zeroPacketID: no packet id 9 at %d", i)
	}
	b[i+1] = 0
	return b
}
