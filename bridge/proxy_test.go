package bridge

// proxy sits between the bridge and the broker. It can hold the bridge's
// PUBLISH packets (the broker then never acknowledges them, as if it
// were overloaded) while everything else passes, and counts the
// PUBACKs the bridge sends: its acknowledgements of telemetry.
import (
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/eclipse/paho.golang/packets"
)

type proxy struct {
	t        *testing.T
	ln       net.Listener
	upstream string
	acks     atomic.Int64

	mu    sync.Mutex
	hold  bool
	held  []heldPacket
	conns []net.Conn
	wg    sync.WaitGroup
}

type heldPacket struct {
	to net.Conn
	p  *packets.ControlPacket
}

func startProxy(t *testing.T, upstream string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, upstream: upstream}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) url() string { return "mqtt://" + p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.upstream)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(c, up)
			c.Close()
		}()
		go func() {
			defer p.wg.Done()
			defer func() {
				// The bridge's side is gone: what was held never reached
				// the broker, as if lost in flight.
				p.mu.Lock()
				p.held = slices.DeleteFunc(p.held, func(h heldPacket) bool { return h.to == up })
				p.mu.Unlock()
				up.Close()
			}()
			for {
				pk, err := packets.ReadPacket(c)
				if err != nil {
					return
				}
				if pk.Type == packets.PUBACK {
					p.acks.Add(1)
				}
				p.mu.Lock()
				if p.hold && pk.Type == packets.PUBLISH {
					p.held = append(p.held, heldPacket{up, pk})
					p.mu.Unlock()
					continue
				}
				_, err = pk.WriteTo(up)
				p.mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
}

// setHold starts or stops holding the bridge's publishes; stopping sends
// the held ones on, in order. Those of a connection that closed are
// dropped when it closes.
func (p *proxy) setHold(hold bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hold = hold
	if !hold {
		for _, h := range p.held {
			_, _ = h.p.WriteTo(h.to)
		}
		p.held = nil
	}
}

func (p *proxy) heldCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.held)
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
