package worker_test

import (
	"net"
	"strings"
	"sync"
	"testing"
)

// relay forwards TCP connections to an upstream address byte for byte,
// and can be paused: what is read then waits, as on a network path that
// stopped delivering, until it is resumed.
type relay struct {
	ln       net.Listener
	upstream string

	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	conns  []net.Conn
	wg     sync.WaitGroup
}

// startRelay relays to upstream ("host:port") until the test ends.
func startRelay(t *testing.T, upstream string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, upstream: upstream}
	r.cond = sync.NewCond(&r.mu)
	r.wg.Add(1)
	go r.accept()
	t.Cleanup(r.close)
	return r
}

// url is a nats:// URL of the relay.
func (r *relay) url() string { return "nats://" + r.ln.Addr().String() }

func (r *relay) accept() {
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
		r.conns = append(r.conns, c, up)
		r.mu.Unlock()
		r.wg.Add(2)
		go r.pipe(up, c)
		go r.pipe(c, up)
	}
}

// pipe copies src to dst, waiting while the relay is paused.
func (r *relay) pipe(dst, src net.Conn) {
	defer r.wg.Done()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.mu.Lock()
			for r.paused {
				r.cond.Wait()
			}
			r.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// pause holds every byte from now on until resume.
func (r *relay) pause() { r.set(true) }

// resume delivers what was held and relays again.
func (r *relay) resume() { r.set(false) }

func (r *relay) set(paused bool) {
	r.mu.Lock()
	r.paused = paused
	r.cond.Broadcast()
	r.mu.Unlock()
}

func (r *relay) close() {
	r.ln.Close()
	r.mu.Lock()
	r.paused = false
	r.cond.Broadcast()
	for _, c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// hostPort is the host:port of a nats:// URL.
func hostPort(url string) string { return strings.TrimPrefix(url, "nats://") }
