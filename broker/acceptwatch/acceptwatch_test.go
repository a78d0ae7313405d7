package acceptwatch

import (
	"bytes"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/VictoriaMetrics/metrics"
)

// failing fails its first n Accepts with EMFILE, as the net package
// reports it, then accepts from the real listener.
type failing struct {
	net.Listener
	n int
}

func (l *failing) Accept() (net.Conn, error) {
	if l.n > 0 {
		l.n--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// Failed Accepts make the listener not ready, each is counted, one line a
// second is logged; the next accepted connection makes it ready again.
func TestAcceptErrorsUntilAConnectionIsAccepted(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	var logBuf bytes.Buffer
	w := Wrap(&failing{Listener: ln, n: 50}, "tcp", set, slog.New(slog.NewTextHandler(&logBuf, nil)))
	defer w.Close()

	if err := w.Err(); err != nil {
		t.Fatalf("Err before any Accept: %v", err)
	}
	for range 50 {
		if _, err := w.Accept(); err == nil {
			t.Fatal("Accept did not fail")
		}
	}
	err = w.Err()
	if err == nil || !strings.Contains(err.Error(), "too many open files") || !strings.Contains(err.Error(), "MQTT listener tcp") {
		t.Fatalf("Err after failed Accepts: %v", err)
	}
	if got := set.GetOrCreateCounter(`edgefence_accept_errors_total{listener="tcp"}`).Get(); got != 50 {
		t.Errorf("counted %d accept errors, want 50", got)
	}
	if lines := strings.Count(logBuf.String(), "\n"); lines > 2 { // a second may turn once
		t.Errorf("50 accept errors logged %d lines:\n%s", lines, logBuf.String())
	}
	if !strings.Contains(logBuf.String(), "ulimit -n") {
		t.Errorf("the log does not say what to do:\n%s", logBuf.String())
	}

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc, err := w.Accept()
	if err != nil {
		t.Fatal(err)
	}
	sc.Close()
	if err := w.Err(); err != nil {
		t.Errorf("Err after a connection was accepted: %v", err)
	}
	if !strings.Contains(logBuf.String(), "accepting connections again") {
		t.Errorf("the recovery was not logged:\n%s", logBuf.String())
	}

	w.Close()
	if _, err := w.Accept(); err == nil {
		t.Fatal("Accept on a closed listener did not fail")
	}
	if err := w.Err(); err != nil {
		t.Errorf("a closed listener's Accept error counted as a failure: %v", err)
	}
}
