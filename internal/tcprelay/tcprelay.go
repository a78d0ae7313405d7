// Package tcprelay is a TCP relay for tests: it forwards each connection
// to an upstream address byte for byte and can hold either direction, as
// a network path that stops delivering without closing.
package tcprelay

import (
	"net"
	"sync"
	"testing"
)

// Direction is one way through the relay.
type Direction int

const (
	// Up is from the relay's clients to the upstream server.
	Up Direction = iota
	// Down is from the upstream server to the relay's clients.
	Down
)

// Relay is a running relay; Start makes one.
type Relay struct {
	ln       net.Listener
	upstream string

	mu    sync.Mutex
	cond  *sync.Cond
	held  [2]bool
	done  bool
	conns []net.Conn
	wg    sync.WaitGroup
	once  sync.Once
}

// Start relays connections to upstream (host:port) until Close or the
// end of the test.
func Start(tb testing.TB, upstream string) *Relay {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	r := &Relay{ln: ln, upstream: upstream}
	r.cond = sync.NewCond(&r.mu)
	r.wg.Add(1)
	go r.accept()
	tb.Cleanup(r.Close)
	return r
}

// Addr is the relay's host:port.
func (r *Relay) Addr() string { return r.ln.Addr().String() }

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", r.upstream)
		if err != nil {
			c.Close()
			continue
		}
		r.mu.Lock()
		if r.done {
			r.mu.Unlock()
			c.Close()
			up.Close()
			return
		}
		r.conns = append(r.conns, c, up)
		r.mu.Unlock()
		r.wg.Add(2)
		go r.pipe(up, c, Up)
		go r.pipe(c, up, Down)
	}
}

// pipe copies src to dst, waiting while dir is held; what it holds when
// the relay closes is dropped.
func (r *Relay) pipe(dst, src net.Conn, dir Direction) {
	defer r.wg.Done()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.mu.Lock()
			for r.held[dir] && !r.done {
				r.cond.Wait()
			}
			done := r.done
			r.mu.Unlock()
			if done {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Hold stops passing bytes in dir: what is read waits until Release.
func (r *Relay) Hold(dir Direction) { r.set(dir, true) }

// Release delivers what dir held and passes bytes again.
func (r *Relay) Release(dir Direction) { r.set(dir, false) }

func (r *Relay) set(dir Direction, held bool) {
	r.mu.Lock()
	r.held[dir] = held
	r.cond.Broadcast()
	r.mu.Unlock()
}

// Close closes the listener and every connection, dropping what is held,
// and waits for the relay's goroutines.
func (r *Relay) Close() {
	r.once.Do(func() {
		r.ln.Close()
		r.mu.Lock()
		r.done = true
		r.cond.Broadcast()
		for _, c := range r.conns {
			c.Close()
		}
		r.mu.Unlock()
		r.wg.Wait()
	})
}
