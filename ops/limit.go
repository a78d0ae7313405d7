package ops

import (
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// connCount follows the connections the server holds, to say when the
// limit netutil.LimitListener enforces is reached: a counter, and a log
// line at most once a second.
type connCount struct {
	open    atomic.Int64
	max     int64
	full    *metrics.Counter
	lastLog atomic.Int64 // unix ns of the last log line
	log     *slog.Logger
}

func newConnCount(max int, set *metrics.Set, log *slog.Logger) *connCount {
	c := &connCount{max: int64(max), log: log,
		full: set.NewCounter(`edgefence_http_connection_limit_reached_total`)}
	set.NewGauge(`edgefence_http_connections`, func() float64 { return float64(c.open.Load()) })
	return c
}

// state is the server's ConnState hook. A hijacked connection leaves the
// server (it holds its limit slot until it is closed).
func (c *connCount) state(_ net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		if c.open.Add(1) < c.max {
			return
		}
		c.full.Inc()
		now := time.Now().UnixNano()
		if last := c.lastLog.Load(); now-last >= int64(time.Second) && c.lastLog.CompareAndSwap(last, now) {
			c.log.Warn("HTTP connection limit reached: further connections wait until one closes",
				"limit", c.max, "idle_timeout_closes_idle_ones", true)
		}
	case http.StateHijacked, http.StateClosed:
		c.open.Add(-1)
	}
}
