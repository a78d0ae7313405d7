// Package rxstamp reads a TCP connection with the kernel's receive
// timestamp of each read, for the load generator's latency.
package rxstamp

import (
	"encoding/binary"
	"io"
	"net"
	"syscall"
	"time"
)

// Reader reads the subscriber's connection with recvmsg(2) and keeps
// the kernel's receive timestamp (SO_TIMESTAMPNS) of each read: the
// instant the broker's bytes reached the subscriber's socket. A transition
// is received then, not when the load generator's own goroutine gets to
// read it: that goroutine waits its turn behind the 1,000 connections'
// PUBACK readers on the generator's core, and the wait is the generator's,
// not the broker's. The timestamp is of the last segment a read returns, so
// a packet is never stamped earlier than it arrived.
type Reader struct {
	rc    syscall.RawConn
	oob   []byte
	start time.Time // the runner's clock: instants are ns since start
	at    int64     // the last read's receive instant; -1: none
}

// New turns on receive timestamps on c; it returns nil when the socket
// will not give them, and the caller stamps at read instead.
func New(c net.Conn, start time.Time) *Reader {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		return nil
	}
	return &Reader{rc: rc, oob: make([]byte, syscall.CmsgSpace(16)), start: start, at: -1}
}

// Read reads c with recvmsg(2) and keeps the receive instant of what it
// returns for At.
func (s *Reader) Read(p []byte) (int, error) {
	var n, oobn int
	var err error
	rerr := s.rc.Read(func(fd uintptr) bool {
		for {
			n, oobn, _, _, err = syscall.Recvmsg(int(fd), p, s.oob, 0)
			if err != syscall.EINTR {
				return err != syscall.EAGAIN
			}
		}
	})
	switch {
	case rerr != nil:
		return 0, rerr
	case err != nil:
		return 0, err
	case n == 0 && len(p) > 0:
		return 0, io.EOF
	}
	s.at = s.stamp(s.oob[:oobn])
	return n, nil
}

// At returns the last read's receive instant in ns since start, or -1 when
// it had none.
func (s *Reader) At() int64 { return s.at }

// stamp returns the receive instant in a read's control messages on the
// runner's clock, or -1.
func (s *Reader) stamp(oob []byte) int64 {
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return -1
	}
	for _, m := range msgs {
		if m.Header.Level != syscall.SOL_SOCKET || m.Header.Type != syscall.SCM_TIMESTAMPNS {
			continue
		}
		var sec, nsec int64
		switch len(m.Data) { // struct timespec: 64-bit, or 32-bit on armv7
		case 16:
			sec, nsec = int64(binary.NativeEndian.Uint64(m.Data)), int64(binary.NativeEndian.Uint64(m.Data[8:]))
		case 8:
			sec, nsec = int64(int32(binary.NativeEndian.Uint32(m.Data))), int64(int32(binary.NativeEndian.Uint32(m.Data[4:])))
		default:
			return -1
		}
		// The kernel stamps with the wall clock; the runner's instants are
		// monotonic from start, whose wall reading was taken with it.
		return sec*1e9 + nsec - s.start.UnixNano()
	}
	return -1
}
