package broker_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
)

// encode encodes pk for a client of protocol version v, naming the
// protocol in a CONNECT as that version does.
func encode(t *testing.T, v byte, pk packets.Packet) []byte {
	t.Helper()
	if pk.FixedHeader.Type == packets.Connect {
		pk.Connect.ProtocolName = []byte("MQTT")
		if v == 3 {
			pk.Connect.ProtocolName = []byte("MQIsdp")
		}
	}
	b, err := encodePacket(v, pk)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pub(qos byte, id uint16, topic string, payload []byte) packets.Packet {
	return packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: qos}, TopicName: topic, PacketID: id, Payload: payload}
}

// trackerSession is what a tracker of protocol version v sends, each
// element one write: pings, pipelined and cut into single bytes, refused
// ones, retained, QoS 2, larger than the read buffer, with properties,
// other packets between pings, and last a protocol violation, after which
// the broker closes the connection. The packet ids of its QoS 1 and 2
// publishes count up in the order sent, but for the last.
func trackerSession(t *testing.T, v byte, client string, qos2 bool) [][]byte {
	ping := func(ms int64) []byte { return canonical(museumLat, museumLon, ms) }
	topic := "devices/" + client + "/telemetry"
	now := nowMs()
	big := fmt.Appendf(nil, `{"lat":%v,"lon":%v,"ts":%d,"note":%q}`, outLat, outLon, now+9, strings.Repeat("x", 2000))
	huge := fmt.Appendf(nil, `{"lat":%v,"lon":%v,"note":%q}`, outLat, outLon, strings.Repeat("x", 5000))
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	connect := encode(t, v, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Connect},
		Connect: packets.ConnectParams{ClientIdentifier: client, Clean: true, Keepalive: 30}})
	var s [][]byte
	s = append(s, cat(connect, encode(t, v, pub(1, 1, topic, ping(now)))))
	s = append(s, encode(t, v, pub(0, 0, topic, ping(now+1))))
	s = append(s, encode(t, v, pub(1, 2, topic, []byte("nope"))))
	for _, b := range encode(t, v, pub(1, 3, topic, ping(now+2))) {
		s = append(s, []byte{b})
	}
	s = append(s, cat(
		encode(t, v, pub(1, 4, topic, ping(now+3))),
		encode(t, v, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Pingreq}}),
		encode(t, v, pub(1, 5, topic, ping(now+4)))))
	retained := pub(1, 6, topic, ping(now+5))
	retained.FixedHeader.Retain = true
	s = append(s, encode(t, v, retained))
	if qos2 {
		s = append(s, encode(t, v, pub(2, 7, topic, ping(now+6))))
		s = append(s, encode(t, v, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Pubrel, Qos: 1}, PacketID: 7}))
	}
	s = append(s, encode(t, v, pub(1, 8, "other/topic", []byte("hello"))))
	s = append(s, encode(t, v, pub(1, 9, topic, big)))
	s = append(s, encode(t, v, pub(1, 10, topic, huge)))
	if v == 5 {
		withProps := pub(1, 12, topic, ping(now+8))
		withProps.Properties.User = []packets.UserProperty{{Key: "k", Val: "v"}}
		s = append(s, encode(t, v, withProps))
		s = append(s, encode(t, v, pub(1, 13, "geofence/x/y", []byte("forged"))))
	}
	s = append(s, encode(t, v, pub(1, 14, topic, ping(now+10))))
	// A wildcard in a topic name: mochi ends the connection.
	s = append(s, encode(t, v, pub(1, 11, "devices/+/telemetry", ping(now+7))))
	return s
}

// play writes session to a new connection to addr, each element after
// the answers to the one before have had time to arrive, and returns all
// the broker wrote back until it closed the connection.
func play(t *testing.T, addr string, session [][]byte) []byte {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := make(chan []byte, 1)
	go func() {
		_ = c.SetReadDeadline(time.Now().Add(wait))
		b, _ := io.ReadAll(c)
		got <- b
	}()
	for i, w := range session {
		if _, err := c.Write(w); err != nil {
			t.Fatalf("write %d of %d: %v", i, len(session), err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return <-got
}

// A tracker's session is answered packet by packet in the order it was
// sent [MQTT-4.6.0-2], however its bytes are cut: a PUBACK for each QoS 1
// publish (MQTT 5: 0x99 for a payload refused, 0x87 for a topic the ACL
// refuses, and no user properties echoed), PUBREC and PUBCOMP at QoS 2,
// PINGRESP between, and a close (MQTT 5: DISCONNECT 0x82 first) at the
// wildcard topic name.
func TestTrackerSessionIsAnsweredInOrder(t *testing.T) {
	for _, v := range []byte{3, 4, 5} {
		t.Run(fmt.Sprintf("mqtt%d", v), func(t *testing.T) {
			srv := start(t, testConfig(t))
			got := play(t, srv.MQTTAddr(), trackerSession(t, v, "tracker", true))
			type answer struct {
				typ    byte
				id     uint16
				reason byte
			}
			want := []answer{{packets.Connack, 0, 0}}
			for id := uint16(1); id <= 14; id++ {
				switch {
				case id == 7:
					want = append(want, answer{packets.Pubrec, 7, 0}, answer{packets.Pubcomp, 7, 0})
					continue
				case id == 11 || (id == 12 || id == 13) && v < 5:
					continue // the wildcard (last, never answered) and MQTT 5 only
				case id == 5:
					want = append(want, answer{packets.Pingresp, 0, 0})
				}
				rc := byte(0)
				if v == 5 {
					switch id {
					case 2, 10:
						rc = packets.ErrPayloadFormatInvalid.Code
					case 13:
						rc = packets.ErrNotAuthorized.Code
					}
				}
				want = append(want, answer{packets.Puback, id, rc})
			}
			if v == 5 {
				want = append(want, answer{packets.Disconnect, 0, packets.ErrProtocolViolation.Code})
			}
			br := bufio.NewReader(bytes.NewReader(got))
			var answers []answer
			for {
				pk, err := readPacket(br, v)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("answer %d: %v (all: % x)", len(answers), err, got)
				}
				if pk.FixedHeader.Type == packets.Puback && len(pk.Properties.User) > 0 {
					t.Errorf("PUBACK %d echoes the publisher's user properties %v", pk.PacketID, pk.Properties.User)
				}
				answers = append(answers, answer{pk.FixedHeader.Type, pk.PacketID, pk.ReasonCode})
			}
			if !slices.Equal(answers, want) {
				t.Errorf("answers (type, id, reason):\n got %v\nwant %v", answers, want)
			}
		})
	}
}

// A tracker that only publishes at QoS 1 stays connected as long as it
// publishes within its keepalive, and is dropped when it falls silent.
func TestPublishingTrackerStaysConnected(t *testing.T) {
	srv := start(t, testConfig(t))
	r := rawDial(t, srv.MQTTAddr())
	const keepalive = 1 // mochi's deadline: 1.5 s in whole seconds (1 s), and up to 1 s more
	if rc, err := r.connect("steady", creds{}, keepalive); err != nil || rc != 0 {
		t.Fatalf("connect: %#x, %v", rc, err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for id := uint16(1); time.Now().Before(deadline); id++ {
		if rc, err := r.publish1("devices/steady/telemetry", id, canonical(outLat, outLon, nowMs())); err != nil || rc != 0 {
			t.Fatalf("ping %d, %v after connecting: %#x, %v", id, time.Until(deadline)-3*time.Second, rc, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = r.conn.SetReadDeadline(time.Now().Add(wait))
	if _, err := r.br.ReadByte(); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Fatalf("silent tracker: read %v, want the broker to close the connection", err)
	}
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && strings.Contains(ne.Err.Error(), "reset")
}
