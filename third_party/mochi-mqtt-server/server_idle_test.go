// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package mqtt

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

// idleTestServer is a server whose clients connect over loopback TCP.
type idleTestServer struct {
	*Server
	ln    net.Listener
	wg    sync.WaitGroup
	conns []net.Conn // the clients' ends
}

// newIdleTestServer starts a server with opts accepting MQTT clients on a
// free loopback port; everything stops when the test ends.
func newIdleTestServer(tb testing.TB, opts *Options) *idleTestServer {
	tb.Helper()
	opts.Logger = logger
	s := &idleTestServer{Server: New(opts)}
	require.NoError(tb, s.AddHook(new(AllowHook), nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	s.ln = ln
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				_ = s.EstablishConnection("tcp", c)
			}()
		}
	}()
	tb.Cleanup(s.stop)
	return s
}

// connect connects an MQTT 3.1.1 client, reads its CONNACK, then sends a
// PINGREQ and reads the PINGRESP, so that its reader has handled a packet
// and gone back to waiting for the next.
func (s *idleTestServer) connect(tb testing.TB, id string) {
	tb.Helper()
	c, err := net.Dial("tcp", s.ln.Addr().String())
	require.NoError(tb, err)
	s.conns = append(s.conns, c)
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	var buf bytes.Buffer
	pk := packets.Packet{ProtocolVersion: 4, FixedHeader: packets.FixedHeader{Type: packets.Connect},
		Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, Keepalive: 60, ClientIdentifier: id}}
	require.NoError(tb, pk.ConnectEncode(&buf))
	buf.Write(packets.TPacketData[packets.Pingreq].Get(packets.TPingreq).RawBytes)
	_, err = c.Write(buf.Bytes())
	require.NoError(tb, err)
	_, err = io.ReadFull(c, make([]byte, 4+2)) // CONNACK, PINGRESP
	require.NoError(tb, err)
}

// stop disconnects the clients and closes the server.
func (s *idleTestServer) stop() {
	for _, c := range s.conns {
		_ = c.Close()
	}
	_ = s.ln.Close()
	_ = s.Close()
	s.wg.Wait()
}

// heapAlloc returns the bytes of live heap objects after two collections,
// the second of which empties the sync.Pools.
func heapAlloc() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestServerIdleConnectionHoldsNoReadBuffer connects clients with a
// large read buffer over TCP and checks that, once they are idle, their
// buffers are not held: the heap does not grow by a buffer per client.
func TestServerIdleConnectionHoldsNoReadBuffer(t *testing.T) {
	const clients, size = 16, 256 * 1024
	s := newIdleTestServer(t, &Options{ClientNetReadBufferSize: size})
	before := heapAlloc()
	for i := 0; i < clients; i++ {
		s.connect(t, "idle-"+strconv.Itoa(i))
	}
	// A reader returns its buffer when it next waits, just after it has
	// written the PINGRESP: give them a moment to get there.
	var per int64
	for try := 0; try < 100; try++ {
		per = (int64(heapAlloc()) - int64(before)) / clients
		if per < size/4 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.Less(t, per, int64(size/4), "heap per idle client, with a read buffer of %d bytes", size)

	// And the connections still work: each answers a PINGREQ.
	for _, c := range s.conns {
		_, err := c.Write(packets.TPacketData[packets.Pingreq].Get(packets.TPingreq).RawBytes)
		require.NoError(t, err)
		_, err = io.ReadFull(c, make([]byte, 2))
		require.NoError(t, err)
	}
}

// BenchmarkServerIdleConnection connects b.N MQTT 3.1.1 clients over
// loopback TCP (mochi's default options), each sending a PINGREQ after its
// CONNECT, and reports what an idle connection costs the server: its live
// heap, its goroutines' stack memory and its goroutines.
func BenchmarkServerIdleConnection(b *testing.B) {
	s := newIdleTestServer(b, &Options{})
	var before, after runtime.MemStats
	heapAlloc()
	runtime.ReadMemStats(&before)
	g := runtime.NumGoroutine()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.connect(b, "idle-"+strconv.Itoa(i))
	}
	b.StopTimer()
	time.Sleep(100 * time.Millisecond) // the last readers go back to waiting
	heapAlloc()
	runtime.ReadMemStats(&after)
	n := float64(b.N)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "heap-B/conn")
	b.ReportMetric(float64(int64(after.StackInuse)-int64(before.StackInuse))/n, "stack-B/conn")
	b.ReportMetric(float64(runtime.NumGoroutine()-g)/n, "goroutines/conn")
}

// sizeClass returns the allocator's size class for an object of n bytes
// and how many live heap objects it holds, after two collections (which
// empty the sync.Pools).
func sizeClass(n uintptr) (size uint32, live int64) {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	for _, c := range m.BySize {
		if uintptr(c.Size) >= n {
			return c.Size, int64(c.Mallocs) - int64(c.Frees)
		}
	}
	return 0, 0
}

// TestServerIdleConnectionHoldsNoPacket checks that the reader of an idle
// connection does not hold the packet it reads into (some 800 bytes):
// after a packet each, idle clients hold no more objects of a packet's
// size class than their Client structs do.
func TestServerIdleConnectionHoldsNoPacket(t *testing.T) {
	const clients = 64
	class, before := sizeClass(unsafe.Sizeof(packets.Packet{}))
	classmates := 0.0 // the Client structs, if their size class is a packet's
	if c, _ := sizeClass(unsafe.Sizeof(Client{})); c == class {
		classmates = 1
	}
	s := newIdleTestServer(t, &Options{})
	for i := 0; i < clients; i++ {
		s.connect(t, "idle-"+strconv.Itoa(i))
	}
	// A reader returns its packet just before it next waits: give them a
	// moment to get there.
	var per float64
	for try := 0; try < 100; try++ {
		_, live := sizeClass(unsafe.Sizeof(packets.Packet{}))
		if per = float64(live-before) / clients; per < classmates+0.5 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.Less(t, per, classmates+0.5, "objects of %d B per idle client", class)
}
