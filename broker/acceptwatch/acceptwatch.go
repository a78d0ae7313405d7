// Package acceptwatch watches the Accept of the MQTT listeners, so that a
// listener that cannot take connections (the process is out of file
// descriptors) shows in /readyz, a counter and the log, not only in
// clients' timeouts. The retrying itself is the accept loop's: mochi's
// (patch 0016) and net/http's pause 5 ms, doubling to 1 s, between tries.
package acceptwatch

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/mochi-mqtt/server/v2/listeners"
)

// settle is how long after an Accept error a listener counts as not
// accepting when no Accept has succeeded since: longer than the accept
// loops' longest pause, so that a listener that keeps failing never looks
// ready between two tries, and one that tried again and now waits for a
// connection (its Accept blocks without an error) looks ready again.
const settle = 2 * listeners.MaxAcceptRetryDelay

// Listener is a net.Listener whose Accept errors are counted in
// edgefence_accept_errors_total{listener=name}, logged once a second at
// most and reported by Err until Accept succeeds again.
type Listener struct {
	net.Listener
	name   string
	errs   *metrics.Counter
	log    *slog.Logger
	logged atomic.Int64 // Unix second of the last line logged
	down   atomic.Bool  // an Accept failed and none has succeeded since

	mu    sync.Mutex
	err   error     // the last Accept error
	at    time.Time // when it came
	since int       // errors since the last successful Accept
}

// Wrap watches ln, naming it name (the mochi listener id: tcp, tls, ws).
func Wrap(ln net.Listener, name string, set *metrics.Set, log *slog.Logger) *Listener {
	return &Listener{
		Listener: ln,
		name:     name,
		errs:     set.NewCounter(`edgefence_accept_errors_total{listener="` + name + `"}`),
		log:      log,
	}
}

// Accept accepts from the watched listener and records the outcome; an
// error is returned as it is, for the accept loop to retry.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	switch {
	case err == nil:
		if l.down.Load() {
			l.recovered()
		}
	case !errors.Is(err, net.ErrClosed):
		l.failed(err)
	}
	return c, err
}

func (l *Listener) failed(err error) {
	l.errs.Inc()
	now := time.Now()
	l.mu.Lock()
	l.err, l.at = err, now
	l.since++
	l.down.Store(true)
	l.mu.Unlock()
	if last := l.logged.Load(); last == now.Unix() || !l.logged.CompareAndSwap(last, now.Unix()) {
		return
	}
	l.log.Error("MQTT listener cannot accept connections"+advice(err)+
		"; it tries again, pausing up to 1s (further errors this second are only counted in edgefence_accept_errors_total)",
		"listener", l.name, "addr", l.Addr().String(), "error", err)
}

func (l *Listener) recovered() {
	l.mu.Lock()
	n := l.since
	l.since = 0
	l.down.Store(false)
	l.mu.Unlock()
	if n > 0 {
		l.log.Info("MQTT listener accepting connections again", "listener", l.name, "addr", l.Addr().String(), "accept_errors", n)
	}
}

// advice says what the operator can do about err.
func advice(err error) string {
	switch {
	case errors.Is(err, syscall.EMFILE):
		return ": the process is out of file descriptors (one per connection, connected or not yet); raise its limit (ulimit -n, systemd LimitNOFILE) or lower --max-connections and --connect-timeout"
	case errors.Is(err, syscall.ENFILE):
		return ": the system is out of file descriptors; raise fs.file-max or stop what holds them"
	case errors.Is(err, syscall.ENOBUFS), errors.Is(err, syscall.ENOMEM):
		return ": the system is out of memory for sockets"
	}
	return ""
}

// Err says why the listener is not accepting connections, or returns nil:
// an Accept failed within the last 2 s and none has succeeded since.
func (l *Listener) Err() error {
	if !l.down.Load() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.down.Load() || time.Since(l.at) >= settle {
		return nil
	}
	return fmt.Errorf("MQTT listener %s (%s) cannot accept connections: %w", l.name, l.Addr(), l.err)
}
