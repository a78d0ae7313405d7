package loadgen_test

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/edgefence/edgefence/loadgen"
)

// relay forwards every connection it accepts to target and counts them.
func relay(t *testing.T, target string) (addr string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = new(atomic.Int64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			for _, p := range [][2]net.Conn{{c, up}, {up, c}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _ = io.Copy(p[1], p[0])
					p[1].Close()
				}()
			}
		}
	}()
	return ln.Addr().String(), accepted
}

// With --sub-addr the subscriber, and only it, connects there; the
// trackers stay on --addr, and the transitions are matched all the same.
func TestSubscriberConnectsToSubAddr(t *testing.T) {
	srv, fences := startBroker(t, false)
	cfg := tinyLoad(srv, fences, "geofence/#")
	addr, accepted := relay(t, srv.MQTTAddr())
	cfg.SubAddr = addr
	res, err := loadgen.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("%d connections to --sub-addr, want the subscriber's alone", n)
	}
	if res.Matched == 0 || res.Matched != res.Expected || res.Missing != 0 {
		t.Errorf("transitions: expected %d, matched %d, missing %d", res.Expected, res.Matched, res.Missing)
	}

	// A --sub-addr nobody listens on fails the subscriber, not the trackers.
	cfg.SubAddr = refusingAddr(t)
	if _, err := loadgen.Run(context.Background(), cfg); err == nil || !strings.HasPrefix(err.Error(), "subscriber:") {
		t.Errorf("Run with a closed --sub-addr: %v, want a subscriber error", err)
	}
}

// refusingAddr returns a loopback address that refuses connections: its
// port is bound for the rest of the test but not listened on. A port
// closed after a pick could be taken (and listened on) by another process
// before the connect.
func refusingAddr(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
}

func TestSubscriberAddrDefaultsToAddr(t *testing.T) {
	c := loadgen.DefaultConfig()
	if c.SubAddr != "" || c.SubscriberAddr() != c.Addr {
		t.Errorf("default: SubAddr %q, subscriber to %q, Addr %q", c.SubAddr, c.SubscriberAddr(), c.Addr)
	}
	c.Addr, c.SubAddr = "127.0.0.1:1", "127.0.0.1:2"
	if got := c.SubscriberAddr(); got != "127.0.0.1:2" {
		t.Errorf("subscriber to %q, want --sub-addr", got)
	}
}
