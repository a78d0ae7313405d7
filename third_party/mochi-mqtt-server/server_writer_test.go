// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package mqtt

import (
	"bytes"
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

func TestClientOutboundQueueClaim(t *testing.T) {
	q := newClientOutboundQueue(4)
	ok, start := q.put(&packets.Packet{PacketID: 1}, true)
	require.True(t, ok)
	require.True(t, start) // no writer yet: the caller starts one
	ok, start = q.put(&packets.Packet{PacketID: 2}, true)
	require.True(t, ok)
	require.False(t, start) // the writer has not emptied the queue
	require.False(t, q.claim())

	for i := 0; i < 2; i++ {
		_, ok = q.pop()
		require.True(t, ok)
	}
	_, ok = q.pop() // empty: the writer's role is given up
	require.False(t, ok)
	_, start = q.put(&packets.Packet{PacketID: 3}, true)
	require.True(t, start)

	q = newClientOutboundQueue(4)
	_, start = q.put(&packets.Packet{PacketID: 1}, false)
	require.False(t, start) // not claimed
	require.True(t, q.claim())

	q = newClientOutboundQueue(4)
	q.serveWith()
	_, start = q.put(&packets.Packet{PacketID: 1}, true)
	require.False(t, start) // WriteLoop serves it
	require.Len(t, q.ready, 1)
}

// writerGoroutines counts the goroutines writing a client's queued
// packets, of any server in the process.
func writerGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(".(*Client).WriteLoop(")) || bytes.Contains(g, []byte(".(*Client).writeOutbound(")) {
			count++
		}
	}
	return count
}

// writersSettle waits a little for the writer goroutines to be no more
// than want and returns their number.
func writersSettle(want int) int {
	n := writerGoroutines()
	for try := 0; try < 200 && n > want; try++ {
		time.Sleep(10 * time.Millisecond)
		n = writerGoroutines()
	}
	return n
}

// TestServerIdleClientHasNoWriter connects clients over TCP and checks that
// no goroutine waits to write to them while they are idle, that a message
// queued for one is still delivered, and that the writer started for it
// ends once the message is written. (Writers left by other tests may end
// meanwhile, so the count may fall, but must not grow.)
func TestServerIdleClientHasNoWriter(t *testing.T) {
	const clients = 20
	s := newIdleTestServer(t, &Options{InlineClient: true})
	before := writerGoroutines()
	for i := 0; i < clients; i++ {
		s.connect(t, "writer-"+strconv.Itoa(i))
	}
	require.LessOrEqual(t, writersSettle(before), before, "writer goroutines with %d more idle clients", clients)

	sub := packets.Packet{ProtocolVersion: 4, FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}, PacketID: 1,
		Filters: packets.Subscriptions{{Filter: "a/b", Qos: 0}}}
	var buf bytes.Buffer
	require.NoError(t, sub.SubscribeEncode(&buf))
	c := s.conns[0]
	_, err := c.Write(buf.Bytes())
	require.NoError(t, err)
	_, err = io.ReadFull(c, make([]byte, 5)) // SUBACK
	require.NoError(t, err)

	for i := 0; i < 3; i++ { // each publish finds the subscriber idle again
		require.NoError(t, s.Publish("a/b", []byte("m"+strconv.Itoa(i)), false, 0))
		got := make([]byte, 9) // PUBLISH "a/b" "mN"
		_, err = io.ReadFull(c, got)
		require.NoError(t, err)
		require.Equal(t, "m"+strconv.Itoa(i), string(got[7:]))
		require.LessOrEqual(t, writersSettle(before), before, "writer goroutines after a delivery")
	}
}

// BenchmarkServerPublishToIdleSubscriber publishes b.N QoS 0 messages one
// at a time to a subscriber over loopback TCP, each read by it before the
// next is published: every message is queued for an idle client, so with a
// writer started per burst each one starts it.
func BenchmarkServerPublishToIdleSubscriber(b *testing.B) {
	s := newIdleTestServer(b, &Options{InlineClient: true})
	s.connect(b, "subscriber")
	c := s.conns[0]
	sub := packets.Packet{ProtocolVersion: 4, FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}, PacketID: 1,
		Filters: packets.Subscriptions{{Filter: "a/b", Qos: 0}}}
	var buf bytes.Buffer
	require.NoError(b, sub.SubscribeEncode(&buf))
	_, err := c.Write(buf.Bytes())
	require.NoError(b, err)
	_, err = io.ReadFull(c, make([]byte, 5)) // SUBACK
	require.NoError(b, err)
	_ = c.SetDeadline(time.Time{})

	payload := []byte("m")
	got := make([]byte, 8) // PUBLISH "a/b" "m"
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Publish("a/b", payload, false, 0); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, got); err != nil {
			b.Fatal(err)
		}
	}
}
