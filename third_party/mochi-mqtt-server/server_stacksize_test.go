// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

// The race detector's instrumentation makes every frame larger, so the
// stack sizes these tests check are those of a build without it.

//go:build !race

package mqtt

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

// TestServerIdleReaderStackShrinks connects clients over TCP and checks
// that, once they are idle, their readers' stacks are small: the garbage
// collector shrinks a stack to what its goroutine uses, and an idle reader
// no longer keeps the CONNECT handshake's frames (and their copies of the
// packet) below the read it waits in.
func TestServerIdleReaderStackShrinks(t *testing.T) {
	const clients = 64
	s := newIdleTestServer(t, &Options{})
	var before, after runtime.MemStats
	heapAlloc()
	runtime.ReadMemStats(&before)
	for i := 0; i < clients; i++ {
		s.connect(t, "shrink-"+strconv.Itoa(i))
	}
	time.Sleep(100 * time.Millisecond) // the last readers go back to waiting
	heapAlloc()                        // each collection halves a stack at most
	heapAlloc()
	runtime.ReadMemStats(&after)
	perConn := (int64(after.StackInuse) - int64(before.StackInuse)) / clients
	require.Less(t, perConn, int64(8192), "stack bytes per idle connection")
}

// TestServerPublishingReaderStackStaysSmall has clients publish a QoS 1
// message each through hooks that work in place, after their idle
// readers' stacks have shrunk, and checks that a publish and its
// acknowledgement fit in 8 KiB: the reader's stack does not double to
// 16 KiB, which OnPublish's and OnPacketEncode's copies of the packet
// made it do, nor do the acknowledgement's frames below it.
func TestServerPublishingReaderStackStaysSmall(t *testing.T) {
	publishingReaderStack(t, "", &inPlaceHook{t: t})
}

// TestServerPublishingReaderStackStaysSmallWithoutPublishHooks is
// TestServerPublishingReaderStackStaysSmall with no hook that reads
// packets or publishes at all: the hooks' copying paths, which would
// copy the packet for no hook, are not taken.
func TestServerPublishingReaderStackStaysSmallWithoutPublishHooks(t *testing.T) {
	publishingReaderStack(t, "")
}

// TestServerRoutingReaderStackStaysSmall is
// TestServerPublishingReaderStackStaysSmall with a client subscribed to
// the messages: routing each to the subscriber on the publisher's reader
// fits in 8 KiB too, the packet going down that path by pointer.
func TestServerRoutingReaderStackStaysSmall(t *testing.T) {
	publishingReaderStack(t, "a/b", &inPlaceHook{t: t})
}

// publishingReaderStack connects clients to a server with hooks added
// (and a client subscribed to filter, unless it is empty), lets their
// idle readers' stacks shrink, has each publish a QoS 1 message to a/b
// and read its PUBACK, and checks that the readers' stacks grew to 8 KiB
// at most.
func publishingReaderStack(t *testing.T, filter string, hooks ...Hook) {
	const clients = 256 // other goroutines' stacks change too: spread over many
	s := newIdleTestServer(t, &Options{})
	for _, h := range hooks {
		require.NoError(t, s.AddHook(h, nil))
	}
	if filter != "" {
		subscribeTestClient(t, s, filter)
	}
	var before, after runtime.MemStats
	heapAlloc()
	runtime.ReadMemStats(&before)
	for i := 0; i < clients; i++ {
		s.connect(t, "pub-"+strconv.Itoa(i))
	}
	time.Sleep(100 * time.Millisecond)
	heapAlloc()
	heapAlloc()
	for _, c := range s.conns {
		var buf bytes.Buffer
		encodeAckTestPublish(t, &buf, 1, 1)
		_, err := c.Write(buf.Bytes())
		require.NoError(t, err)
		_, err = io.ReadFull(c, make([]byte, 4))
		require.NoError(t, err)
	}
	runtime.ReadMemStats(&after)
	perConn := (int64(after.StackInuse) - int64(before.StackInuse)) / clients
	t.Logf("stack bytes per publishing connection: %d", perConn)
	require.LessOrEqual(t, perConn, int64(8192+1024), "stack bytes per publishing connection")
}

// deepConnectHook uses about 12 KiB of stack in OnConnect, as an
// authenticating hook's own work may.
type deepConnectHook struct {
	HookBase
}

func (h *deepConnectHook) ID() string { return "deep-connect" }

func (h *deepConnectHook) Provides(b byte) bool { return b == OnConnect }

func (h *deepConnectHook) OnConnect(cl *Client, pk packets.Packet) error {
	if deepFrames(12) == 0 {
		return packets.ErrUnspecifiedError
	}
	return nil
}

// deepFrames recurses n frames of about 1 KiB each.
//
//go:noinline
func deepFrames(n int) int {
	var b [1024]byte
	b[n%len(b)] = byte(n)
	if n == 0 {
		return int(b[0]) + 1
	}
	return deepFrames(n-1) + int(b[n%len(b)])
}

// TestServerReaderStackNotGrownByHandshake connects clients through a
// hook that takes 12 KiB of stack in OnConnect, with the garbage
// collector off so that nothing shrinks a stack (as with GODEBUG
// gcshrinkstackoff=1), and checks that the connections' readers, waiting
// for their first packet after the CONNACK, have stacks of 8 KiB at most:
// the handshake runs on a goroutine of its own, not on the reader's.
func TestServerReaderStackNotGrownByHandshake(t *testing.T) {
	const clients = 64
	s := newIdleTestServer(t, &Options{})
	require.NoError(t, s.AddHook(new(deepConnectHook), nil))
	var before, after runtime.MemStats
	heapAlloc()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.ReadMemStats(&before)
	for i := 0; i < clients; i++ {
		c, err := net.Dial("tcp", s.ln.Addr().String())
		require.NoError(t, err)
		s.conns = append(s.conns, c)
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		var buf bytes.Buffer
		pk := packets.Packet{ProtocolVersion: 4, FixedHeader: packets.FixedHeader{Type: packets.Connect},
			Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, Keepalive: 60, ClientIdentifier: "deep-" + strconv.Itoa(i)}}
		require.NoError(t, pk.ConnectEncode(&buf))
		_, err = c.Write(buf.Bytes())
		require.NoError(t, err)
		_, err = io.ReadFull(c, make([]byte, 4)) // CONNACK
		require.NoError(t, err)
	}
	time.Sleep(100 * time.Millisecond) // the last readers go to waiting
	runtime.ReadMemStats(&after)
	perConn := (int64(after.StackInuse) - int64(before.StackInuse)) / clients
	t.Logf("stack bytes per connection after its handshake: %d", perConn)
	require.LessOrEqual(t, perConn, int64(8192+1024), "stack bytes per connection after its handshake")
}

// subscribeTestClient connects a client that subscribes to filter at QoS
// 0 and then reads, and discards, what it is sent until the test ends.
func subscribeTestClient(t *testing.T, s *idleTestServer, filter string) {
	t.Helper()
	s.connect(t, "subscriber")
	c := s.conns[len(s.conns)-1]
	s.conns = s.conns[:len(s.conns)-1] // not one of the publishers
	t.Cleanup(func() { _ = c.Close() })
	var buf bytes.Buffer
	pk := packets.Packet{ProtocolVersion: 4, FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}, PacketID: 1,
		Filters: packets.Subscriptions{{Filter: filter}}}
	require.NoError(t, pk.SubscribeEncode(&buf))
	_, err := c.Write(buf.Bytes())
	require.NoError(t, err)
	_, err = io.ReadFull(c, make([]byte, 5)) // SUBACK
	require.NoError(t, err)
	_ = c.SetReadDeadline(time.Time{})
	go func() { _, _ = io.Copy(io.Discard, c) }()
}
