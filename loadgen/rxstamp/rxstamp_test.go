package rxstamp

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/edgefence/edgefence/internal/mqtttest"
)

// A transition counts as received when it reached the subscriber's socket:
// a reader that gets to it late does not make the broker look slow.
func TestStampIsArrivalNotRead(t *testing.T) {
	client, server := mqtttest.TCPPair(t)
	start := time.Now()
	s := New(server, start)
	if s == nil {
		t.Fatal("no receive timestamps on a loopback TCP socket")
	}
	buf := make([]byte, 64)
	// The kernel turns timestamps on a moment after asking (a deferred
	// static key): until then reads come unstamped.
	for i := 0; s.at < 0; i++ {
		if i == 200 {
			t.Fatal("no receive timestamp on a loopback TCP socket after 2 s")
		}
		time.Sleep(10 * time.Millisecond)
		if _, err := client.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
	sent := int64(time.Since(start))
	if _, err := client.Write([]byte("transition")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the reader is busy elsewhere
	n, err := s.Read(buf)
	read := int64(time.Since(start))
	if err != nil || string(buf[:n]) != "transition" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if s.at < sent || s.at > read-50*int64(time.Millisecond) {
		t.Fatalf("stamped at %v; written at %v, read at %v: want the arrival, before the read", time.Duration(s.at), time.Duration(sent), time.Duration(read))
	}
	client.Close()
	if _, err := s.Read(buf); !errors.Is(err, io.EOF) {
		t.Fatalf("after the peer closed: %v, want EOF", err)
	}
}
