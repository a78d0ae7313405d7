package broker

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// connWait bounds every wait for bytes that should arrive.
const connWait = 5 * time.Second

// countingConn counts the writes that reach the socket and the deadlines
// passed on to it.
type countingConn struct {
	net.Conn
	writes    atomic.Int64
	deadlines atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

func (c *countingConn) SetDeadline(t time.Time) error {
	c.deadlines.Add(1)
	return c.Conn.SetDeadline(t)
}

// SyscallConn is the socket's, so that the coalescing conn reads it as it
// reads a client's plain TCP connection.
func (c *countingConn) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(syscall.Conn).SyscallConn()
}

// opaqueConn hides the socket, as TLS and WebSocket connections do.
type opaqueConn struct{ *countingConn }

func (opaqueConn) SyscallConn() {} // not syscall.Conn's: shadows countingConn's

// pairFunc makes a loopback pair; see tcpPair.
type pairFunc func(t *testing.T) (*coalescingConn, *countingConn, net.Conn)

// forBothSockets runs test over a plain TCP socket, read without waiting
// first, and over a connection that hides its socket (TLS, WebSocket).
func forBothSockets(t *testing.T, test func(t *testing.T, pair pairFunc)) {
	t.Run("tcp", func(t *testing.T) { test(t, tcpPair) })
	t.Run("opaque", func(t *testing.T) { test(t, opaquePair) })
}

// tcpPair is a loopback TCP connection: the server end wrapped as the
// broker wraps its clients' connections, and the client end.
func tcpPair(t *testing.T) (*coalescingConn, *countingConn, net.Conn) {
	t.Helper()
	return connPair(t, false)
}

// opaquePair is tcpPair with a server end that hides its socket.
func opaquePair(t *testing.T) (*coalescingConn, *countingConn, net.Conn) {
	t.Helper()
	return connPair(t, true)
}

func connPair(t *testing.T, opaque bool) (*coalescingConn, *countingConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	peer, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw, ok := <-accepted
	if !ok {
		t.Fatal("accept failed")
	}
	inner := &countingConn{Conn: raw}
	c := newCoalescingConn(inner)
	if opaque {
		c = newCoalescingConn(opaqueConn{inner})
	}
	if (c.raw == nil) != opaque {
		t.Fatalf("opaque %v, socket read directly %v", opaque, c.raw != nil)
	}
	t.Cleanup(func() { c.Close(); peer.Close() })
	return c, inner, peer
}

// waitWriting waits until a write has reached the socket.
func waitWriting(t *testing.T, inner *countingConn) {
	t.Helper()
	for deadline := time.Now().Add(connWait); inner.writes.Load() == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the write never reached the socket")
		}
		time.Sleep(time.Millisecond)
	}
}

// readFromPeer has the peer send a byte and the reader read it: the
// reader then has input in hand, and writes are held.
func readFromPeer(t *testing.T, c *coalescingConn, peer net.Conn) {
	t.Helper()
	if _, err := peer.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
}

// readFull reads n bytes from the peer or fails the test after connWait.
func readFull(t *testing.T, peer net.Conn, n int) []byte {
	t.Helper()
	_ = peer.SetReadDeadline(time.Now().Add(connWait))
	b := make([]byte, n)
	if _, err := io.ReadFull(peer, b); err != nil {
		t.Fatalf("reading %d bytes: %v", n, err)
	}
	return b
}

// A burst of packets read in one go is answered in one write, in order:
// what makes a tracker's 8 pings cost one write syscall instead of 8.
func TestCoalescingConnAnswersABurstInOneWrite(t *testing.T) {
	forBothSockets(t, func(t *testing.T, pair pairFunc) {
		c, inner, peer := pair(t)
		if _, err := peer.Write([]byte("12345678")); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, 8)
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatal(err)
		}
		for _, x := range b { // one answer per packet, as mochi writes a PUBACK per PUBLISH
			if _, err := c.Write([]byte{'a', x}); err != nil {
				t.Fatal(err)
			}
		}
		if n := inner.writes.Load(); n != 0 {
			t.Fatalf("%d writes reached the socket while the reader had input in hand", n)
		}
		go func() { _, _ = c.Read(make([]byte, 8)) }() // mochi's reader going back for more
		if got := readFull(t, peer, 16); string(got) != "a1a2a3a4a5a6a7a8" {
			t.Fatalf("peer got %q", got)
		}
		if n := inner.writes.Load(); n != 1 {
			t.Fatalf("the burst's answers took %d writes, want 1", n)
		}
	})
}

// A burst bigger than the reader's buffer, read in several reads, is
// answered in one write once the socket has nothing more: a gateway's
// pings for many devices on one connection cost one write syscall, not
// one per read. A connection that hides its socket writes before each
// read instead.
func TestCoalescingConnAnswersABurstReadInPiecesInOneWrite(t *testing.T) {
	for _, tc := range []struct {
		pair   pairFunc
		writes int64
	}{{tcpPair, 1}, {opaquePair, 4}} {
		c, inner, peer := tc.pair(t)
		if _, err := peer.Write([]byte("0123456789abcdef")); err != nil { // one segment: all there at the first read
			t.Fatal(err)
		}
		b := make([]byte, 4) // mochi's read buffer, smaller than the burst
		for i := 0; i < 4; i++ {
			if _, err := io.ReadFull(c, b); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write([]byte{'a', b[0]}); err != nil {
				t.Fatal(err)
			}
		}
		go func() { _, _ = c.Read(b) }() // back for more: the socket is empty
		if got := readFull(t, peer, 8); string(got) != "a0a4a8ac" {
			t.Fatalf("peer got %q", got)
		}
		if n := inner.writes.Load(); n != tc.writes {
			t.Fatalf("opaque %v: the burst's answers took %d writes, want %d", c.raw == nil, n, tc.writes)
		}
	}
}

// The peer closing its end is the end of the reader's input (io.EOF),
// after what it sent.
func TestCoalescingConnReadsToTheEnd(t *testing.T) {
	forBothSockets(t, func(t *testing.T, pair pairFunc) {
		c, _, peer := pair(t)
		if _, err := peer.Write([]byte("last")); err != nil {
			t.Fatal(err)
		}
		peer.Close()
		var got []byte
		b := make([]byte, 8)
		var err error
		for i := 0; i < 10 && err == nil; i++ { // bounded: a Read that says (0, nil) forever must fail, not hang
			var n int
			n, err = c.Read(b)
			got = append(got, b[:n]...)
		}
		if err != io.EOF || string(got) != "last" {
			t.Fatalf("read %q, %v; want \"last\" then EOF", got, err)
		}
		if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("after the end: %d, %v; want io.EOF", n, err)
		}
	})
}

// A write while the reader waits for input (a message routed to an idle
// subscriber, a CONNACK) goes out at once.
func TestCoalescingConnWritesAtOnceWhileTheReaderWaits(t *testing.T) {
	forBothSockets(t, func(t *testing.T, pair pairFunc) {
		c, _, peer := pair(t)
		done := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 8))
			done <- err
		}()
		if _, err := c.Write([]byte("routed")); err != nil {
			t.Fatal(err)
		}
		if got := readFull(t, peer, 6); string(got) != "routed" {
			t.Fatalf("peer got %q", got)
		}
		peer.Close()
		<-done
	})
}

// Held bytes are bounded: past maxHeld they go out without waiting for
// the reader.
func TestCoalescingConnWritesPastTheBound(t *testing.T) {
	c, inner, peer := tcpPair(t)
	readFromPeer(t, c, peer)
	chunk := bytes.Repeat([]byte{'m'}, 1000)
	for i := 0; i < maxHeld/len(chunk)+1; i++ {
		if _, err := c.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if n := inner.writes.Load(); n != 1 {
		t.Fatalf("%d writes reached the socket, want 1 once past %d bytes", n, maxHeld)
	}
	readFull(t, peer, (maxHeld/len(chunk)+1)*len(chunk))
}

// Close writes what is held before closing: mochi writes a DISCONNECT with
// its reason code from the reader and then closes the connection.
func TestCoalescingConnCloseWritesWhatIsHeld(t *testing.T) {
	forBothSockets(t, func(t *testing.T, pair pairFunc) {
		c, _, peer := pair(t)
		readFromPeer(t, c, peer)
		if _, err := c.Write([]byte{0xe0, 0x01, 0x97}); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if got := readFull(t, peer, 3); !bytes.Equal(got, []byte{0xe0, 0x01, 0x97}) {
			t.Fatalf("peer got % x", got)
		}
		if _, err := peer.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Fatalf("after the held bytes: %v, want EOF", err)
		}
	})
}

// A peer that writes but does not read must not stop the reader: its
// writes are read while another goroutine's write is blocked on it, and
// what the reader held goes out after that write, in order.
func TestCoalescingConnReadsWhileAWriteIsBlocked(t *testing.T) {
	forBothSockets(t, func(t *testing.T, pair pairFunc) {
		c, inner, peer := pair(t)
		big := bytes.Repeat([]byte{'B'}, 32<<20) // more than the socket buffers hold
		wrote := make(chan error, 1)
		go func() {
			_, err := c.Write(big)
			wrote <- err
		}()
		waitWriting(t, inner)
		// The reader reads the peer's packet and answers it while the big
		// write is stuck; it reads again without waiting for that write.
		if _, err := peer.Write([]byte("p1")); err != nil {
			t.Fatal(err)
		}
		read := make(chan error, 2)
		go func() {
			b := make([]byte, 2)
			if _, err := io.ReadFull(c, b); err != nil {
				read <- err
				return
			}
			if _, err := c.Write([]byte("ack1")); err != nil {
				read <- err
				return
			}
			_, err := c.Read(b) // goes back for more: must not wait for the big write
			read <- err
		}()
		if _, err := peer.Write([]byte("p2")); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-read:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(connWait):
			t.Fatal("the reader waited for a write the peer was not reading")
		}
		// Now the peer reads: the big write, then the held answer.
		got := readFull(t, peer, len(big)+4)
		if err := <-wrote; err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:len(big)], big) || string(got[len(big):]) != "ack1" {
			t.Fatalf("peer got the big write then %q", got[len(big):])
		}
	})
}

// Close does not hang on a peer that does not read while bytes are held.
func TestCoalescingConnCloseGivesUpOnAPeerThatDoesNotRead(t *testing.T) {
	c, inner, peer := tcpPair(t)
	go func() { _, _ = c.Write(bytes.Repeat([]byte{'B'}, 32<<20)) }()
	waitWriting(t, inner)
	readFromPeer(t, c, peer) // then hold an answer
	if _, err := c.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(closeFlushTimeout + connWait):
		t.Fatal("Close hung on a peer that does not read")
	}
}

// mochi moves the deadline on every packet; only moves of an eighth of
// its span or more, and earlier deadlines, reach the poller.
func TestCoalescingConnRoundsDeadlines(t *testing.T) {
	c, inner, _ := tcpPair(t)
	now := time.Now()
	keep := 90 * time.Second // keepalive 60 s
	if err := c.SetDeadline(now.Add(keep)); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 100; i++ { // 100 packets in 1 s
		_ = c.SetDeadline(now.Add(keep + time.Duration(i)*10*time.Millisecond))
	}
	if n := inner.deadlines.Load(); n != 1 {
		t.Fatalf("%d deadlines passed on for moves of 1 s in a 90 s span, want 1", n)
	}
	_ = c.SetDeadline(now.Add(keep + keep/8))
	if n := inner.deadlines.Load(); n != 2 {
		t.Fatalf("a move of an eighth of the span was not passed on (%d)", n)
	}
	_ = c.SetDeadline(now.Add(time.Second))
	_ = c.SetDeadline(time.Time{})
	if n := inner.deadlines.Load(); n != 4 {
		t.Fatalf("an earlier deadline or none was not passed on (%d calls, want 4)", n)
	}
	// Short spans (keepalive 1 or 2 s) are passed on exactly.
	for i := 0; i < 3; i++ {
		_ = c.SetDeadline(time.Now().Add(time.Second + time.Duration(i)*time.Millisecond))
	}
	if n := inner.deadlines.Load(); n != 7 {
		t.Fatalf("short-span deadlines were rounded (%d calls, want 7)", n)
	}
}

// The deadline in force ends an idle connection: rounding never leaves
// it without one. A deadline set around SetDeadline is not mistaken for
// the one SetDeadline remembers.
func TestCoalescingConnDeadlineStillEndsAnIdleConnection(t *testing.T) {
	forBothSockets(t, func(t *testing.T, pair pairFunc) {
		c, inner, _ := pair(t)
		_ = c.SetDeadline(time.Now().Add(200 * time.Millisecond))
		_ = c.SetDeadline(time.Now().Add(201 * time.Millisecond))
		done := make(chan error, 1)
		go func() {
			_, err := c.Read(make([]byte, 1))
			done <- err
		}()
		select {
		case err := <-done:
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("idle read ended with %v, want a timeout", err)
			}
		case <-time.After(connWait):
			t.Fatal("an idle read outlived its deadline")
		}

		n := inner.deadlines.Load()
		_ = c.SetDeadline(time.Now().Add(90 * time.Second))
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		_ = c.SetDeadline(time.Now().Add(90*time.Second + time.Millisecond))
		if got := inner.deadlines.Load() - n; got != 2 {
			t.Fatalf("%d of 2 deadlines passed on: after a direct read deadline the next one must be", got)
		}
	})
}

// Several goroutines writing while the reader reads and answers: every
// byte arrives, each writer's bytes in its order and the reader's answers
// in theirs (MQTT requires PUBACKs in the order of the PUBLISHes).
func TestCoalescingConnKeepsEachWritersOrder(t *testing.T) {
	forBothSockets(t, func(t *testing.T, pair pairFunc) {
		c, _, peer := pair(t)
		const writers, each, packets = 3, 2000, 2000

		// The peer sends packets of 4 bytes; the reader answers each with a
		// record; writers send records too. A record is writer id + sequence.
		go func() {
			var b [4]byte
			for i := 0; i < packets; i++ {
				binary.BigEndian.PutUint32(b[:], uint32(i))
				if _, err := peer.Write(b[:]); err != nil {
					return
				}
			}
		}()
		var wg sync.WaitGroup
		errs := make(chan error, writers+1)
		wg.Add(1)
		go func() { // mochi's reader
			var in [4]byte
			var out [5]byte
			for i := 0; i < packets; i++ {
				if _, err := io.ReadFull(c, in[:]); err != nil {
					errs <- err
					wg.Done()
					return
				}
				out[0] = writers
				copy(out[1:], in[:])
				if _, err := c.Write(out[:]); err != nil {
					errs <- err
					wg.Done()
					return
				}
			}
			wg.Done()
			_, _ = c.Read(in[:]) // back for more, as mochi's reader: releases the last answers
		}()
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var out [5]byte
				for i := 0; i < each; i++ {
					out[0] = byte(w)
					binary.BigEndian.PutUint32(out[1:], uint32(i))
					if _, err := c.Write(out[:]); err != nil {
						errs <- err
						return
					}
				}
			}()
		}

		next := make([]uint32, writers+1)
		total := writers*each + packets
		got := readFull(t, peer, total*5)
		for off := 0; off < len(got); off += 5 {
			w, seq := got[off], binary.BigEndian.Uint32(got[off+1:])
			if int(w) > writers || seq != next[w] {
				t.Fatalf("record %d: writer %d sequence %d, want %d", off/5, w, seq, next[w])
			}
			next[w]++
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if fmt.Sprint(next) != fmt.Sprint([]uint32{each, each, each, packets}) {
			t.Fatalf("records per writer %v", next)
		}
	})
}
