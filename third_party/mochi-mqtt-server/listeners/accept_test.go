// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package listeners

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// failingListener fails its first fail Accepts with err, as a listener
// does when the process is out of file descriptors, then accepts again.
type failingListener struct {
	net.Listener
	err   error
	fail  int32
	calls atomic.Int32
}

func (l *failingListener) Accept() (net.Conn, error) {
	if l.calls.Add(1) <= l.fail {
		return nil, l.err
	}
	return l.Listener.Accept()
}

// acceptError is the error Accept returns for errno, as the net package
// wraps it.
func acceptError(errno syscall.Errno) error {
	return &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", errno)}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

// testListener is a listener of each kind with an accept loop, its
// net.Listener swapped for wrap's.
type testListener struct {
	Listener
	addr func() net.Addr
}

func testListeners(t *testing.T, wrap func(net.Listener) net.Listener) map[string]testListener {
	t.Helper()
	tcp := NewTCP(Config{ID: "tcp", Address: "127.0.0.1:0"})
	require.NoError(t, tcp.Init(logger))
	tcp.listen = wrap(tcp.listen)

	unix := NewUnixSock(Config{ID: "unix", Address: filepath.Join(t.TempDir(), "mochi.sock")})
	require.NoError(t, unix.Init(logger))
	unix.listen = wrap(unix.listen)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	n := NewNet("net", wrap(ln))
	require.NoError(t, n.Init(logger))

	return map[string]testListener{
		"tcp":  {tcp, func() net.Addr { return tcp.listen.Addr() }},
		"unix": {unix, func() net.Addr { return unix.listen.Addr() }},
		"net":  {n, func() net.Addr { return n.listener.Addr() }},
	}
}

// A burst of connections past the process's file descriptor limit made
// Accept fail with EMFILE once, and Serve returned for good: the server
// ran on, but no client could connect again. Serve must wait and accept
// again, whatever the error, until the listener is closed.
func TestServeAcceptsAgainAfterAcceptErrors(t *testing.T) {
	errs := map[string]error{
		"EMFILE":       acceptError(syscall.EMFILE),
		"ENFILE":       acceptError(syscall.ENFILE),
		"ENOBUFS":      acceptError(syscall.ENOBUFS),
		"ENOMEM":       acceptError(syscall.ENOMEM),
		"ECONNABORTED": acceptError(syscall.ECONNABORTED),
		"timeout":      &net.OpError{Op: "accept", Net: "tcp", Err: timeoutError{}},
		"other":        errors.New("accept: something else"),
	}
	for name, acceptErr := range errs {
		t.Run(name, func(t *testing.T) {
			for kind, l := range testListeners(t, func(ln net.Listener) net.Listener {
				return &failingListener{Listener: ln, err: acceptErr, fail: 3}
			}) {
				established := make(chan struct{}, 1)
				served := make(chan struct{})
				go func() {
					defer close(served)
					l.Serve(func(id string, c net.Conn) error {
						established <- struct{}{}
						return c.Close()
					})
				}()

				c, err := net.Dial(l.addr().Network(), l.addr().String())
				require.NoError(t, err, kind)
				select {
				case <-established:
				case <-served:
					t.Fatalf("%s: Serve returned after the accept error %q", kind, acceptErr)
				case <-time.After(5 * time.Second):
					t.Fatalf("%s: the connection was not established within 5s of the accept error %q", kind, acceptErr)
				}
				_ = c.Close()

				l.Close(MockCloser)
				<-served
			}
		})
	}
}

// Between accepts Serve waits 5 ms, doubling while Accept keeps failing, and
// logs each failure; Close ends the wait.
func TestServeAcceptBacksOffAndCloseEndsIt(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &buf, mu: &mu}, nil))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fl := &failingListener{Listener: ln, err: acceptError(syscall.EMFILE), fail: 1 << 30}
	l := NewNet("net", fl)
	require.NoError(t, l.Init(log))

	served := make(chan struct{})
	go func() {
		defer close(served)
		l.Serve(MockEstablisher)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for fl.calls.Load() < 4 { // 5 + 10 + 20 ms of pauses
		select {
		case <-served:
			t.Fatalf("Serve returned after %d failed accepts", fl.calls.Load())
		default:
		}
		require.True(t, time.Now().Before(deadline), "Serve tried %d accepts in 5s", fl.calls.Load())
		time.Sleep(time.Millisecond)
	}
	l.Close(MockCloser)
	<-served

	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, buf.String(), "accept failed; retrying")
	require.Contains(t, buf.String(), "too many open files")
	require.Contains(t, buf.String(), "delay=5ms")
	require.Contains(t, buf.String(), "delay=10ms")
	require.Contains(t, buf.String(), "delay=20ms")
}

// A listener closed from outside ends Serve, without a pause or a log line.
func TestServeReturnsWhenTheListenerIsClosed(t *testing.T) {
	var buf bytes.Buffer
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := NewNet("net", ln)
	require.NoError(t, l.Init(slog.New(slog.NewTextHandler(&buf, nil))))

	served := make(chan struct{})
	go func() {
		defer close(served)
		l.Serve(MockEstablisher)
	}()
	require.NoError(t, ln.Close())
	<-served
	require.Empty(t, buf.String())
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}
