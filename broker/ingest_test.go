package broker_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
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
// element one write: pings taken directly and ones mochi must handle
// (retained, QoS 2, too large for the read buffer, with properties,
// refused), pipelined and cut into single bytes, other packets between
// pings, and last a protocol violation, after which mochi closes the
// connection.
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

// Taking pings off the connection is invisible to the tracker: byte for
// byte, it gets the answers mochi's own path gives, in the same order —
// for the pings taken, and for everything that goes to mochi between them
// — whether direct ingest takes them from mochi's reader or the MQTT
// listener's tracker path serves the connection until it needs mochi (its
// session has a QoS 2 publish: mochi takes over there).
func TestDirectIngestAnswersAsMochiDoes(t *testing.T) {
	modes := []struct {
		name          string
		direct, light bool
	}{{"mochi", false, false}, {"direct ingest", true, false}, {"tracker path", true, true}}
	for _, v := range []byte{3, 4, 5} {
		// With a QoS 2 publish the tracker path hands the connection to
		// mochi there; without, it serves the session up to its last
		// packet, whose wildcard topic is mochi's to refuse.
		for _, qos2 := range []bool{true, false} {
			t.Run(fmt.Sprintf("mqtt%d/qos2=%v", v, qos2), func(t *testing.T) {
				answers := map[string][]byte{}
				for _, m := range modes {
					cfg := testConfig(t)
					cfg.DirectIngest, cfg.LightTrackers = m.direct, m.light
					srv := start(t, cfg)
					answers[m.name] = play(t, srv.MQTTAddr(), trackerSession(t, v, "tracker", qos2))
					if m.direct && metric(t, srv, "edgefence_pings_direct_total") == 0 {
						t.Fatalf("%s: no ping was taken directly: this test compares mochi with itself", m.name)
					}
					if m.light && metric(t, srv, "edgefence_tracker_promoted_total") != 1 {
						t.Fatalf("%s: handed to mochi %v times, want once", m.name, metric(t, srv, "edgefence_tracker_promoted_total"))
					}
				}
				for _, m := range modes[1:] {
					if !bytes.Equal(answers[m.name], answers["mochi"]) {
						t.Errorf("answers differ:\n%s: % x\nmochi:  % x", m.name, answers[m.name], answers["mochi"])
					}
				}
				if n := bytes.Count(answers["mochi"], []byte{0x40, 2}); n < 8 {
					t.Fatalf("%d plain PUBACKs in % x: the session did not get far", n, answers["mochi"])
				}
			})
		}
	}
}

// A tracker that only publishes never reaches mochi's reader, which
// refreshes the keepalive deadline: it must stay connected as long as it
// publishes, and be dropped when it falls silent.
func TestDirectIngestKeepsAPublishingTrackerConnected(t *testing.T) {
	cfg := testConfig(t)
	cfg.LightTrackers = false // direct ingest on mochi's reader (TestTrackerKeepalive: the tracker path)
	srv := start(t, cfg)
	r := rawDial(t, srv.MQTTAddr())
	const keepalive = 1 // mochi's deadline: 1.5 s, whole seconds: 1 s
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
	if metric(t, srv, "edgefence_pings_direct_total") == 0 {
		t.Fatal("no ping was taken directly: this test tests nothing")
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
