// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package mqtt

import (
	"bytes"
	"io"
	"net"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

// discardConn is a connection whose writes succeed and go nowhere.
type discardConn struct{ net.Conn }

func (discardConn) Write(b []byte) (int, error) { return len(b), nil }

// sentHook provides OnPacketSent.
type sentHook struct{ HookBase }

func (h *sentHook) ID() string                                   { return "sent" }
func (h *sentHook) Provides(b byte) bool                         { return b == OnPacketSent }
func (h *sentHook) OnPacketSent(*Client, packets.Packet, []byte) {}

// encodeHook provides OnPacketEncode.
type encodeHook struct{ HookBase }

func (h *encodeHook) ID() string           { return "encode" }
func (h *encodeHook) Provides(b byte) bool { return b == OnPacketEncode }

// pubackTestClient returns a client of s, speaking version v, whose
// connection's other end is returned.
func pubackTestClient(t *testing.T, s *Server, v byte) (*Client, net.Conn) {
	r, w := net.Pipe()
	t.Cleanup(func() {
		_ = r.Close()
		_ = w.Close()
	})
	cl := s.NewClient(r, "tcp", "zen", false)
	cl.Properties.ProtocolVersion = v
	_ = w.SetDeadline(time.Now().Add(5 * time.Second))
	return cl, w
}

// acknowledgeAndRead acknowledges pk as sent by cl and returns what w reads.
func acknowledgeAndRead(t *testing.T, s *Server, cl *Client, w net.Conn, pk *packets.Packet, n int) []byte {
	done := make(chan error, 1)
	go func() { done <- s.acknowledgePublish(cl, pk) }()
	got := make([]byte, n)
	_, err := io.ReadFull(w, got)
	require.NoError(t, err)
	require.NoError(t, <-done)
	return got
}

func TestServerPlainPubackIsThePubackPacket(t *testing.T) {
	for _, v := range []byte{4, 5} {
		s := newAckTestServer(t)
		cl, w := pubackTestClient(t, s, v)
		pk := &packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1}, PacketID: 0x1234, TopicName: "a/b"}
		require.True(t, s.plainPuback(cl, pk), "MQTT %d", v)

		want := new(bytes.Buffer)
		ack := packets.Packet{ProtocolVersion: v, FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: 0x1234, ReasonCode: packets.CodeGrantedQos1.Code}
		require.NoError(t, ack.PubackEncode(want))
		sent, quota := s.Info.PacketsSent, cl.State.Inflight.receiveQuota
		require.Equal(t, want.Bytes(), acknowledgeAndRead(t, s, cl, w, pk, want.Len()), "MQTT %d", v)
		require.Equal(t, sent+1, s.Info.PacketsSent)
		require.Equal(t, quota, cl.State.Inflight.receiveQuota, "the receive quota is given back")
	}
}

func TestServerPubackThatIsNotPlain(t *testing.T) {
	pk := func(qos byte) *packets.Packet {
		return &packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: qos}, PacketID: 7, TopicName: "a/b"}
	}
	s := newAckTestServer(t)
	cl, _ := pubackTestClient(t, s, 5)
	require.False(t, s.plainPuback(cl, pk(2)), "QoS 2 is acknowledged by PUBREC")

	inherit := pk(1)
	inherit.Properties.User = []packets.UserProperty{{Key: "k", Val: "v"}}
	require.False(t, s.plainPuback(cl, inherit), "the PUBACK inherits the publish's user properties")
	s.Options.Capabilities.Compatibilities.NoInheritedPropertiesOnAck = true
	require.True(t, s.plainPuback(cl, inherit), "none inherited")

	for _, h := range []Hook{new(sentHook), new(encodeHook)} {
		s := newAckTestServer(t)
		require.NoError(t, s.AddHook(h, nil))
		cl, _ := pubackTestClient(t, s, 4)
		require.False(t, s.plainPuback(cl, pk(1)), "a hook sees the PUBACK: %s", h.ID())
	}

	s = newAckTestServer(t)
	cl, w := pubackTestClient(t, s, 5)
	got := acknowledgeAndRead(t, s, cl, w, inherit, 13)
	ack := packets.Packet{ProtocolVersion: 5}
	require.NoError(t, ack.FixedHeader.Decode(got[0]))
	ack.FixedHeader.Remaining = len(got) - 2
	require.NoError(t, ack.PubackDecode(got[2:]))
	require.Equal(t, inherit.Properties.User, ack.Properties.User, "the full PUBACK, with the inherited property")
}

// BenchmarkServerAcknowledgePublish acknowledges a QoS 1 publish, as the
// server does each one it accepts, over a connection that costs nothing.
func BenchmarkServerAcknowledgePublish(b *testing.B) {
	for _, v := range []byte{4, 5} {
		b.Run(map[byte]string{4: "3.1.1", 5: "5"}[v], func(b *testing.B) {
			s := newAckTestServer(b)
			r, w := net.Pipe()
			defer r.Close()
			defer w.Close()
			cl := s.NewClient(discardConn{r}, "tcp", "bench", false)
			cl.Properties.ProtocolVersion = v
			pk := &packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1}, PacketID: 7, TopicName: "a/b"}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.acknowledgePublish(cl, pk); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkServerPublishPacketIDInUse checks a QoS 1 publish's packet id
// against the client's inflight messages, as the server does for each
// publish it receives, in the common case: not in use.
func BenchmarkServerPublishPacketIDInUse(b *testing.B) {
	s := newAckTestServer(b)
	r, w := net.Pipe()
	defer r.Close()
	defer w.Close()
	cl := s.NewClient(discardConn{r}, "tcp", "bench", false)
	cl.State.Inflight.Set(packets.Packet{PacketID: 9, FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1}})
	pk := &packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1}, PacketID: 7, TopicName: "a/b"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if inUse, err := s.publishPacketIDInUse(cl, pk); inUse || err != nil {
			b.Fatal(inUse, err)
		}
	}
}
