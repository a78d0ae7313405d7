package tcprelay_test

import (
	"io"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgefence/edgefence/internal/tcprelay"
)

// An echo server behind the relay: a held direction delivers nothing
// until it is released, then everything in order; Close ends it all.
func TestRelayHoldsAndReleases(t *testing.T) {
	defer goleak.VerifyNone(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = io.Copy(c, c)
			c.Close()
		}
	}()
	r := tcprelay.Start(t, ln.Addr().String())
	c, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	echo := func(want string, within time.Duration) error {
		_ = c.SetReadDeadline(time.Now().Add(within))
		got := make([]byte, len(want))
		if _, err := io.ReadFull(c, got); err != nil {
			return err
		}
		if string(got) != want {
			t.Fatalf("echoed %q, want %q", got, want)
		}
		return nil
	}
	if _, err := c.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := echo("a", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []tcprelay.Direction{tcprelay.Up, tcprelay.Down} {
		r.Hold(dir)
		if _, err := c.Write([]byte("bc")); err != nil {
			t.Fatal(err)
		}
		if err := echo("bc", 200*time.Millisecond); err == nil {
			t.Fatalf("direction %d held: the bytes came through", dir)
		}
		r.Release(dir)
		if err := echo("bc", 5*time.Second); err != nil {
			t.Fatalf("direction %d released: %v", dir, err)
		}
	}
	r.Hold(tcprelay.Up)
	if _, err := c.Write([]byte("d")); err != nil {
		t.Fatal(err)
	}
	r.Close() // drops what it holds and closes the connection
	if err := echo("d", 5*time.Second); err == nil {
		t.Fatal("what the relay held was delivered after Close")
	}
	c.Close()
	ln.Close()
}
