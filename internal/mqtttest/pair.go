package mqtttest

import (
	"net"
	"testing"
)

// TCPPair returns the two ends of one loopback TCP connection, closed
// when the test ends: a real socket for tests of what a connection does,
// where a net.Pipe would hide the kernel's buffering and timestamps.
func TCPPair(t testing.TB) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	return client, server
}
