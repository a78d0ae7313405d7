package broker

import (
	"crypto/tls"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// maxHeld bounds what a connection holds back before writing anyway.
const maxHeld = 8 << 10

// closeFlushTimeout bounds how long Close waits to write what it holds.
const closeFlushTimeout = time.Second

// minDeadlineSpan is the shortest deadline span that SetDeadline rounds:
// mochi's keepalive deadline is 1.5 × keepalive in whole seconds (1 s for
// a keepalive of 1), so short spans are passed on exactly.
const minDeadlineSpan = 4 * time.Second

// coalescingConn is a client connection that writes what mochi sends
// while its reader is working through input it has already read in one
// write, when the reader next asks the socket for more, as Mosquitto
// does. mochi writes every PUBACK with a write syscall of its own — 20 to
// 32 % of the broker's CPU when trackers send pings in bursts — and
// every outbound message too unless more are queued.
//
// Bytes keep their order: whatever is held goes out before anything
// written after it. Held bytes are written by the next Read that finds
// the socket empty (any next Read, on connections that hide their
// socket), by the next write that cannot be held, or by Close; a Read
// never waits for another
// goroutine's write (a client that stops reading while it writes must not
// stop us reading its PUBACKs), it leaves the held bytes to that writer.
type coalescingConn struct {
	net.Conn
	raw syscall.RawConn // the socket underneath, when Conn is a plain one

	frames *frames // when ingest may take pings from this connection: see readFrames

	// readRaw's call of the poller, made once per connection, and its
	// arguments and results: only the reader reads.
	readFn func(fd uintptr) bool
	rp     []byte
	rn     int
	rerr   error

	wmu sync.Mutex // serialises writes to the socket; held during the syscall

	mu      sync.Mutex // guards the fields below; never held during I/O
	held    []byte     // written by the client, not yet sent
	holding bool       // the reader has input in hand: hold writes
	err     error      // the first write error; later writes fail with it

	// The deadline last passed on and its span; only the reader sets
	// deadlines (mochi refreshes it on every packet it reads).
	deadline time.Time
	span     time.Duration
}

func newCoalescingConn(c net.Conn) *coalescingConn {
	cc := &coalescingConn{Conn: c}
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			cc.raw = raw
			cc.readFn = cc.readSocket
		}
	}
	return cc
}

// Read reads what the socket already has and keeps holding; only when
// the socket has nothing does it write what is held, then wait. mochi's
// reader reads through a buffer, so it comes back only once it has
// handled what it has: a burst that needs several reads (a gateway's
// pings for many devices, more than the read buffer) is answered in one
// write, not one per read. Connections that are not plain sockets (TLS,
// WebSocket) write what is held before every read.
func (c *coalescingConn) Read(p []byte) (int, error) {
	if c.frames != nil {
		return c.readFrames(p)
	}
	return c.read(p)
}

// read is Read without frames.
func (c *coalescingConn) read(p []byte) (int, error) {
	if c.raw != nil && len(p) > 0 {
		return c.readRaw(p)
	}
	c.unhold()
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.hold()
	}
	return n, err
}

// readRaw reads p from the socket, writing what is held when the socket
// has nothing yet, before the poller waits for more: the same read and
// wait as net.Conn.Read, and no extra syscall.
func (c *coalescingConn) readRaw(p []byte) (int, error) {
	c.rp = p
	err := c.raw.Read(c.readFn)
	n, rerr := c.rn, c.rerr
	c.rp, c.rerr = nil, nil
	switch {
	case err != nil: // a deadline or a closed connection, as net.Conn says it
		return 0, err
	case rerr != nil:
		return 0, &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", rerr)}
	case n == 0:
		return 0, io.EOF
	}
	c.hold()
	return n, nil
}

// readSocket is readRaw's attempt at the socket, called by the poller
// until it returns true; false has the poller wait for input.
func (c *coalescingConn) readSocket(fd uintptr) bool {
	for {
		c.rn, c.rerr = syscall.Read(int(fd), c.rp)
		if c.rerr != syscall.EINTR {
			break
		}
	}
	if c.rerr == syscall.EAGAIN {
		c.unhold()
		return false
	}
	return true
}

// hold puts the connection in holding mode: the reader has input in hand.
func (c *coalescingConn) hold() {
	c.mu.Lock()
	c.holding = true
	c.mu.Unlock()
}

// unhold ends holding mode and writes what is held, unless another
// goroutine is writing: a read never waits for another goroutine's write;
// that writer writes what is held after its own bytes.
func (c *coalescingConn) unhold() {
	c.mu.Lock()
	c.holding = false
	pending := len(c.held) > 0
	c.mu.Unlock()
	if pending && c.wmu.TryLock() {
		_ = c.writeHeld() // an error is kept in c.err for the next write
	}
}

// Write holds p while the reader has input in hand, else writes what is
// held and p together.
func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return 0, err
	}
	if c.holding && len(c.held)+len(p) <= maxHeld {
		c.held = append(c.held, p...)
		c.mu.Unlock()
		return len(p), nil
	}
	c.mu.Unlock()

	c.wmu.Lock()
	c.mu.Lock()
	if len(c.held) > 0 {
		c.held = append(c.held, p...)
		c.mu.Unlock()
	} else { // nothing to go first: write p without copying it
		c.mu.Unlock()
		_, err := c.Conn.Write(p)
		c.mu.Lock()
		c.settle(0, err)
		c.mu.Unlock()
	}
	if err := c.writeHeld(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeHeld writes what is held, with wmu locked, and unlocks it. Then it
// looks again: a Read that found wmu locked left its bytes to the writer.
func (c *coalescingConn) writeHeld() error {
	var first error
	for {
		for {
			c.mu.Lock()
			buf := c.held
			if len(buf) == 0 || c.err != nil {
				if first == nil {
					first = c.err
				}
				c.mu.Unlock()
				break
			}
			c.mu.Unlock()
			// Others may append to held meanwhile, past buf's end.
			_, err := c.Conn.Write(buf)
			c.mu.Lock()
			c.settle(len(buf), err)
			c.mu.Unlock()
		}
		c.wmu.Unlock()

		c.mu.Lock()
		pending := len(c.held) > 0 && !c.holding && c.err == nil
		c.mu.Unlock()
		if !pending || !c.wmu.TryLock() {
			return first
		}
	}
}

// settle drops the n bytes written from the front of held and records a
// write's error; with mu locked.
func (c *coalescingConn) settle(n int, err error) {
	if err != nil && c.err == nil {
		c.err = err
	}
	c.held = c.held[:copy(c.held, c.held[n:])]
	if len(c.held) == 0 && cap(c.held) > maxHeld {
		c.held = nil // a large write's buffer is not kept
	}
}

// Close writes what is held (a DISCONNECT with its reason code is
// written and then the connection closed by the same goroutine), waiting
// at most closeFlushTimeout for a peer that does not read, then closes.
func (c *coalescingConn) Close() error {
	c.mu.Lock()
	c.holding = false
	pending := len(c.held) > 0 && c.err == nil
	c.mu.Unlock()
	if pending {
		_ = c.Conn.SetWriteDeadline(time.Now().Add(closeFlushTimeout))
		c.wmu.Lock()
		_ = c.writeHeld()
	}
	return c.Conn.Close()
}

// SetDeadline passes on a deadline that is earlier, or later by an eighth
// of its span or more: mochi moves it forward on every packet it reads,
// and each move costs the runtime poller a timer update. The deadline in
// force is then at most an eighth earlier than asked, 1.31 × keepalive at
// worst, still past the keepalive a client keeps to.
func (c *coalescingConn) SetDeadline(t time.Time) error {
	if !t.IsZero() && !c.deadline.IsZero() && c.span >= minDeadlineSpan &&
		!t.Before(c.deadline) && t.Sub(c.deadline) < c.span/8 {
		return nil
	}
	c.deadline = t
	if !t.IsZero() {
		c.span = time.Until(t)
	}
	return c.Conn.SetDeadline(t)
}

// SetReadDeadline passes t on and forgets the deadline SetDeadline set.
func (c *coalescingConn) SetReadDeadline(t time.Time) error {
	c.deadline = time.Time{}
	return c.Conn.SetReadDeadline(t)
}

// SetWriteDeadline passes t on and forgets the deadline SetDeadline set.
func (c *coalescingConn) SetWriteDeadline(t time.Time) error {
	c.deadline = time.Time{}
	return c.Conn.SetWriteDeadline(t)
}

// ConnectionState is the TLS state of the connection underneath (empty
// for plain TCP), so that a client certificate still logs in.
func (c *coalescingConn) ConnectionState() tls.ConnectionState {
	if tc, ok := c.Conn.(interface{ ConnectionState() tls.ConnectionState }); ok {
		return tc.ConnectionState()
	}
	return tls.ConnectionState{}
}
