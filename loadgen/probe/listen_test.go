package probe

import (
	"net"
	"os"
	"testing"
)

// The test's own listener is its own; a port nobody listens on is not,
// and neither is a listener of another process (pid 1's view of ours).
func TestListens(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if ok, err := Listens(os.Getpid(), port); !ok || err != nil {
		t.Errorf("own listener on %d: %v, %v; want true", port, ok, err)
	}
	if ok, _ := Listens(1, port); ok && os.Getpid() != 1 {
		t.Errorf("pid 1 holds the test's listener on %d", port)
	}
	ln.Close()
	if ok, err := Listens(os.Getpid(), port); ok || err != nil {
		t.Errorf("closed listener on %d: %v, %v; want false", port, ok, err)
	}
}
