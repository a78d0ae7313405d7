// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package listeners

import (
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// The pause before an accept loop tries again after Accept failed: it
// starts at MinAcceptRetryDelay and doubles, up to MaxAcceptRetryDelay, for
// as long as Accept keeps failing; as in net/http's Server.Serve.
const (
	MinAcceptRetryDelay = 5 * time.Millisecond
	MaxAcceptRetryDelay = time.Second
)

// serveAccept is the accept loop of the TCP, UnixSock and Net listeners: it
// hands each connection accepted from ln to establish, in a goroutine of
// its own, until the listener is closed (end is 1, or Accept says
// net.ErrClosed).
//
// Any other Accept error is retried after a pause. They pass: EMFILE and
// ENFILE (the process or the system is out of file descriptors, until
// connections close), ENOBUFS and ENOMEM, and on Linux the network errors
// of a pending connection that accept(2) returns and says to retry like
// EAGAIN. Returning on them would leave the listener dead for good while
// the server runs on.
func serveAccept(id string, ln net.Listener, end *uint32, closing <-chan struct{}, log *slog.Logger, establish EstablishFn) {
	var delay time.Duration
	for {
		if atomic.LoadUint32(end) == 1 {
			return
		}

		conn, err := ln.Accept()
		if err != nil {
			if atomic.LoadUint32(end) == 1 || errors.Is(err, net.ErrClosed) {
				return
			}
			delay = min(max(2*delay, MinAcceptRetryDelay), MaxAcceptRetryDelay)
			log.Warn("accept failed; retrying", "error", err, "delay", delay)
			pause := time.NewTimer(delay)
			select {
			case <-pause.C:
			case <-closing:
				pause.Stop()
				return
			}
			continue
		}
		delay = 0

		if atomic.LoadUint32(end) == 1 {
			_ = conn.Close()
			return
		}
		go func() {
			if err := establish(id, conn); err != nil {
				log.Warn("", "error", err)
			}
		}()
	}
}

// acceptClosing is closed when a listener is closed, to end its accept
// loop's pause at once. The zero value is ready to use.
type acceptClosing struct {
	once sync.Once
	ch   chan struct{}
}

// C returns the channel, closed by close.
func (c *acceptClosing) C() <-chan struct{} {
	c.once.Do(func() { c.ch = make(chan struct{}) })
	return c.ch
}

// close closes the channel; it is called once, by the listener's Close.
func (c *acceptClosing) close() {
	c.C()
	close(c.ch)
}
