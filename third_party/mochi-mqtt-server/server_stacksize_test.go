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
	"runtime"
	"strconv"
	"testing"
	"time"

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
	const clients = 256 // other goroutines' stacks change too: spread over many
	s := newIdleTestServer(t, &Options{})
	require.NoError(t, s.AddHook(&inPlaceHook{t: t}, nil))
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
	require.LessOrEqual(t, perConn, int64(8192+1024), "stack bytes per publishing connection")
}
