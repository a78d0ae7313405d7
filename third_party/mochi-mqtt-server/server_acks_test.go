// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package mqtt

import (
	"bytes"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

// writeCountingConn counts the writes made to a connection.
type writeCountingConn struct {
	net.Conn
	writes atomic.Int64
}

func (c *writeCountingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// newAckTestServer returns a server with the default capabilities that
// allows every client, closed when the test ends.
func newAckTestServer(t testing.TB) *Server {
	s := New(&Options{Logger: logger})
	_ = s.AddHook(new(AllowHook), nil)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// connectAckTestClient connects an MQTT 3.1.1 client to s over a pipe and
// reads its CONNACK; it returns the client's end, the server's end (which
// counts the server's writes) and the result of EstablishConnection.
func connectAckTestClient(t *testing.T, s *Server) (net.Conn, *writeCountingConn, chan error) {
	t.Helper()
	r, w := net.Pipe()
	sc := &writeCountingConn{Conn: r}
	o := make(chan error, 1)
	go func() {
		o <- s.EstablishConnection("tcp", sc)
	}()
	t.Cleanup(func() {
		_ = w.Close()
		<-o
	})

	_ = w.SetDeadline(time.Now().Add(5 * time.Second))
	_, err := w.Write(packets.TPacketData[packets.Connect].Get(packets.TConnectClean).RawBytes)
	require.NoError(t, err)
	want := packets.TPacketData[packets.Connack].Get(packets.TConnackAcceptedNoSession).RawBytes
	got := make([]byte, len(want))
	_, err = io.ReadFull(w, got)
	require.NoError(t, err)
	require.Equal(t, want, got)
	return w, sc, o
}

// encodeAckTestPublish encodes an MQTT 3.1.1 publish of the given QoS and packet id.
func encodeAckTestPublish(t testing.TB, buf *bytes.Buffer, qos byte, id uint16) {
	t.Helper()
	pk := packets.Packet{
		ProtocolVersion: 4,
		FixedHeader:     packets.FixedHeader{Type: packets.Publish, Qos: qos},
		TopicName:       "a/b",
		PacketID:        id,
		Payload:         []byte("ping"),
	}
	require.NoError(t, pk.PublishEncode(buf))
}

// readAcks reads n bytes from the client's end within a few seconds.
func readAcks(t *testing.T, w net.Conn, n int) []byte {
	t.Helper()
	_ = w.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, n)
	_, err := io.ReadFull(w, got)
	require.NoError(t, err)
	return got
}

func TestServerAnswersABurstInOneWrite(t *testing.T) {
	// Held for as long as the burst takes on a loaded machine: the test
	// is of one write per burst, not of how fast ten packets are handled.
	hold := maxAckHold
	t.Cleanup(func() { maxAckHold = hold })
	maxAckHold = time.Minute
	s := newAckTestServer(t)
	w, sc, _ := connectAckTestClient(t, s)

	// Eight QoS 1 publishes, a PINGREQ and a QoS 2 publish, in one write.
	var burst bytes.Buffer
	for id := uint16(1); id <= 8; id++ {
		encodeAckTestPublish(t, &burst, 1, id)
	}
	burst.Write([]byte{packets.Pingreq << 4, 0})
	encodeAckTestPublish(t, &burst, 2, 9)

	before := sc.writes.Load()
	_, err := w.Write(burst.Bytes())
	require.NoError(t, err)

	var want []byte
	for id := byte(1); id <= 8; id++ {
		want = append(want, packets.Puback<<4, 2, 0, id)
	}
	want = append(want, packets.Pingresp<<4, 0, packets.Pubrec<<4, 2, 0, 9)
	require.Equal(t, want, readAcks(t, w, len(want)))
	require.Equal(t, int64(1), sc.writes.Load()-before, "one write answers the burst")
}

func TestServerWritesHeldAcksBeforeWaitingForMore(t *testing.T) {
	s := newAckTestServer(t)
	w, _, _ := connectAckTestClient(t, s)

	// Two whole publishes and the start of a third: the two acknowledgements
	// must not wait for the rest of the third.
	var burst bytes.Buffer
	for id := uint16(1); id <= 3; id++ {
		encodeAckTestPublish(t, &burst, 1, id)
	}
	split := burst.Len() - 5
	_, err := w.Write(burst.Bytes()[:split])
	require.NoError(t, err)
	require.Equal(t, []byte{packets.Puback << 4, 2, 0, 1, packets.Puback << 4, 2, 0, 2}, readAcks(t, w, 8))

	_, err = w.Write(burst.Bytes()[split:])
	require.NoError(t, err)
	require.Equal(t, []byte{packets.Puback << 4, 2, 0, 3}, readAcks(t, w, 4))
}

func TestServerWritesHeldAcksBeforeDisconnect(t *testing.T) {
	s := newAckTestServer(t)
	w, _, o := connectAckTestClient(t, s)

	var burst bytes.Buffer
	encodeAckTestPublish(t, &burst, 1, 1)
	encodeAckTestPublish(t, &burst, 1, 2)
	burst.Write(packets.TPacketData[packets.Disconnect].Get(packets.TDisconnect).RawBytes)
	_, err := w.Write(burst.Bytes())
	require.NoError(t, err)

	_ = w.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(w)
	require.NoError(t, err)
	require.Equal(t, []byte{packets.Puback << 4, 2, 0, 1, packets.Puback << 4, 2, 0, 2}, got)
	require.NoError(t, <-o)
	o <- nil // for the cleanup
}

// slowPublishHook takes a while over each publish.
type slowPublishHook struct {
	HookBase
	delay time.Duration
}

func (h *slowPublishHook) ID() string { return "slow-publish" }

func (h *slowPublishHook) Provides(b byte) bool { return b == OnPublish }

func (h *slowPublishHook) OnPublish(cl *Client, pk packets.Packet) (packets.Packet, error) {
	time.Sleep(h.delay)
	return pk, nil
}

func TestServerHoldsAcksNoLongerThanMaxAckHold(t *testing.T) {
	s := newAckTestServer(t)
	require.NoError(t, s.AddHook(&slowPublishHook{delay: 2 * maxAckHold}, nil))
	w, sc, _ := connectAckTestClient(t, s)

	var burst bytes.Buffer
	for id := uint16(1); id <= 4; id++ {
		encodeAckTestPublish(t, &burst, 1, id)
	}
	before := sc.writes.Load()
	_, err := w.Write(burst.Bytes())
	require.NoError(t, err)
	require.Len(t, readAcks(t, w, 16), 16)
	require.Equal(t, int64(4), sc.writes.Load()-before, "each acknowledgement held past maxAckHold is written")
}

// BenchmarkServerAckBurst measures a QoS 1 publisher over loopback TCP that
// sends its publishes eight to a write and waits for the eight PUBACKs, and
// reports the server's writes per burst.
func BenchmarkServerAckBurst(b *testing.B) {
	s := newAckTestServer(b)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	defer ln.Close()
	var sc *writeCountingConn
	accepted := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		sc = &writeCountingConn{Conn: c}
		close(accepted)
		_ = s.EstablishConnection("tcp", sc)
	}()

	w, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(b, err)
	defer func() {
		_ = w.Close()
		<-done
	}()
	<-accepted
	_, err = w.Write(packets.TPacketData[packets.Connect].Get(packets.TConnectClean).RawBytes)
	require.NoError(b, err)
	connack := make([]byte, 4)
	_, err = io.ReadFull(w, connack)
	require.NoError(b, err)

	const burstLen = 8
	var burst bytes.Buffer
	for id := uint16(1); id <= burstLen; id++ {
		encodeAckTestPublish(b, &burst, 1, id)
	}
	acks := make([]byte, 4*burstLen)

	b.ResetTimer()
	before := sc.writes.Load()
	for i := 0; i < b.N; i++ {
		if _, err := w.Write(burst.Bytes()); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(w, acks); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(sc.writes.Load()-before)/float64(b.N), "writes/burst")
}

func TestServerReadsABurstWhileAWriteIsBlocked(t *testing.T) {
	s := newAckTestServer(t)
	w, _, _ := connectAckTestClient(t, s)
	cl, ok := s.Clients.Get("zen")
	require.True(t, ok)
	for id := uint16(1); id <= 2; id++ {
		cl.State.Inflight.Set(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1}, PacketID: id, TopicName: "a/b"})
	}

	// A write the client does not read yet holds the client's lock, as a
	// writer to a slow subscriber does.
	written := make(chan error, 1)
	go func() {
		written <- cl.WritePacket(packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Pingresp}})
	}()
	time.Sleep(10 * time.Millisecond) // not needed for the test to pass, only for it to test something

	// Two PUBACKs in one write: the reader holds for the second while it
	// handles the first, and must not wait for the lock to do so.
	_, err := w.Write([]byte{packets.Puback << 4, 2, 0, 1, packets.Puback << 4, 2, 0, 2})
	require.NoError(t, err)
	for i := 0; i < 500 && cl.State.Inflight.Len() > 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	require.Equal(t, 0, cl.State.Inflight.Len(), "both PUBACKs handled while the write waits")

	require.Equal(t, []byte{packets.Pingresp << 4, 0}, readAcks(t, w, 2))
	require.NoError(t, <-written)
}

// ackTestClient returns the server's client for the one connection made by
// connectAckTestClient.
func ackTestClient(t *testing.T, s *Server) *Client {
	t.Helper()
	for _, cl := range s.Clients.GetAll() {
		if !cl.Net.Inline {
			return cl
		}
	}
	t.Fatal("no client connected")
	return nil
}

// encodeAckTestPuback encodes an MQTT 3.1.1 PUBACK for packet id.
func encodeAckTestPuback(t testing.TB, buf *bytes.Buffer, id uint16) packets.Packet {
	t.Helper()
	pk := packets.Packet{ProtocolVersion: 4, FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: id}
	require.NoError(t, pk.PubackEncode(buf))
	return pk
}

func TestClientWritePacketsAcknowledgementsInOneWrite(t *testing.T) {
	s := newAckTestServer(t)
	w, sc, _ := connectAckTestClient(t, s)
	cl := ackTestClient(t, s)

	var want bytes.Buffer
	var pks []packets.Packet
	for id := uint16(1); id <= 8; id++ {
		pks = append(pks, encodeAckTestPuback(t, &want, id))
	}
	before := sc.writes.Load()
	done := make(chan error, 1)
	go func() { done <- cl.WritePackets(pks) }()
	require.Equal(t, want.Bytes(), readAcks(t, w, want.Len()))
	require.NoError(t, <-done)
	require.Equal(t, int64(1), sc.writes.Load()-before, "writes for 8 PUBACKs")
}

func TestClientWritePacketsKeepsTheOrder(t *testing.T) {
	s := newAckTestServer(t)
	w, _, _ := connectAckTestClient(t, s)
	cl := ackTestClient(t, s)

	// A publish is not held: the PUBACK before it is written first.
	var want bytes.Buffer
	pks := []packets.Packet{encodeAckTestPuback(t, &want, 1)}
	pub := packets.Packet{ProtocolVersion: 4, FixedHeader: packets.FixedHeader{Type: packets.Publish}, TopicName: "a/b", Payload: []byte("x")}
	require.NoError(t, pub.PublishEncode(&want))
	pks = append(pks, pub, encodeAckTestPuback(t, &want, 2))
	done := make(chan error, 1)
	go func() { done <- cl.WritePackets(pks) }()
	require.Equal(t, want.Bytes(), readAcks(t, w, want.Len()))
	require.NoError(t, <-done)
}

func TestClientWritePacketsLeavesNothingHeld(t *testing.T) {
	s := newAckTestServer(t)
	w, _, _ := connectAckTestClient(t, s)
	cl := ackTestClient(t, s)

	// Batches written at once from several goroutines: the last to end
	// writes what the others left waiting.
	const writers, each = 4, 16
	done := make(chan error, writers)
	for g := 0; g < writers; g++ {
		go func(g int) {
			var pks []packets.Packet
			for i := 0; i < each; i++ {
				pks = append(pks, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: uint16(g*each + i + 1)})
			}
			done <- cl.WritePackets(pks)
		}(g)
	}
	got := readAcks(t, w, writers*each*4)
	for i := 0; i < writers; i++ {
		require.NoError(t, <-done)
	}
	seen := map[uint16]bool{}
	for i := 0; i < len(got); i += 4 {
		require.Equal(t, byte(packets.Puback<<4), got[i])
		seen[uint16(got[i+2])<<8|uint16(got[i+3])] = true
	}
	require.Len(t, seen, writers*each)
}
