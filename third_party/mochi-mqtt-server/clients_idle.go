// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package mqtt

import (
	"bufio"
	"io"
	"net"
	"sync"
	"syscall"
)

// readerPools holds the read buffers of connections waiting for their next
// packet, one pool per buffer size: a connection blocked in Read needs no
// buffer, and most of a broker's connections are idle most of the time.
var readerPools sync.Map // int → *sync.Pool of *bufio.Reader

// getReader returns a pooled reader of r with a buffer of size bytes, or a
// new one.
func getReader(r io.Reader, size int) *bufio.Reader {
	if p, ok := readerPools.Load(size); ok {
		if br, _ := p.(*sync.Pool).Get().(*bufio.Reader); br != nil {
			br.Reset(r)
			return br
		}
	}
	return bufio.NewReaderSize(r, size)
}

// putReader returns br to the pool of its size. It must hold nothing.
func putReader(br *bufio.Reader) {
	br.Reset(nil)
	p, ok := readerPools.Load(br.Size())
	if !ok {
		p, _ = readerPools.LoadOrStore(br.Size(), new(sync.Pool))
	}
	p.(*sync.Pool).Put(br)
}

// rawConnOf returns the descriptor of c to wait on while it is idle, or nil
// if c is not a plain TCP or Unix connection: a type wrapping one may read
// through its own buffers (a TLS or PROXY protocol layer), which reading
// the descriptor directly would bypass.
func rawConnOf(c net.Conn) syscall.RawConn {
	if !idleWaitSupported {
		return nil
	}
	var raw syscall.RawConn
	var err error
	switch c := c.(type) {
	case *net.TCPConn:
		raw, err = c.SyscallConn()
	case *net.UnixConn:
		raw, err = c.SyscallConn()
	}
	if err != nil {
		return nil
	}
	return raw
}

// connReader is what a client's pooled read buffer reads from: the
// connection, or its descriptor while the reader waits for an idle
// connection (inside syscall.RawConn.Read, which holds the connection's
// read lock). It also keeps the state of that wait, so that waiting
// allocates nothing.
type connReader struct {
	conn     net.Conn
	fd       uintptr
	raw      bool                  // read fd, once, without waiting
	size     int                   // the size of the buffer to read into
	br       *bufio.Reader         // the buffer read into, once something was read
	err      error                 // the error of that read
	readable func(fd uintptr) bool // r.tryRead, made once
}

// Read reads from the descriptor or the connection.
func (r *connReader) Read(p []byte) (int, error) {
	if r.raw {
		return readFD(r.fd, p)
	}
	return r.conn.Read(p)
}

// tryRead reads what has arrived on fd into a pooled buffer, and reports
// false, returning the buffer, if nothing has.
func (r *connReader) tryRead(fd uintptr) bool {
	r.br = getReader(r, r.size)
	r.fd, r.raw = fd, true
	_, r.err = r.br.Peek(1) // one read(2) into the buffer
	r.raw = false
	if wouldBlock(r.err) { // nothing yet: wait without the buffer
		putReader(r.br)
		r.br, r.err = nil, nil
		return false
	}
	return true
}

// awaitPacket returns the client's read buffer to the pool while the
// buffer is empty and nothing has arrived, and takes one again to read
// what arrives. It waits as the connection's Read does (one read that
// would block, the poller, then the read, all inside RawConn.Read, after
// it has reset the poller's state), so it costs no extra system call;
// the read deadline applies. Connections without a descriptor of their
// own keep their buffer.
func (cl *Client) awaitPacket() error {
	br := cl.Net.bconn
	if cl.Net.raw == nil || br == nil || br.Buffered() > 0 {
		return nil
	}
	src := &cl.Net.src
	src.conn, src.size = cl.Net.Conn, br.Size()
	if src.readable == nil {
		src.readable = src.tryRead
	}
	putReader(br)
	cl.Net.bconn = nil

	if err := cl.Net.raw.Read(src.readable); err != nil {
		return err
	}
	cl.Net.bconn, src.br = src.br, nil
	err := src.err
	src.err = nil
	return err
}
