package cluster

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
)

// LogEvents returns the options that have a NATS connection report its
// losses, reconnections and asynchronous errors (a write that failed, a
// slow consumer) to log, rather than nats.go's default of raw lines on
// stderr; errors at most one line a second, as they can come in bursts.
func LogEvents(log *slog.Logger) []nats.Option {
	var last atomic.Int64 // second of the last error line
	return []nats.Option{
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("NATS connection lost, reconnecting", "error", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("NATS connection back", "server", nc.ConnectedUrlRedacted())
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			now := time.Now().Unix()
			if l := last.Load(); l == now || !last.CompareAndSwap(l, now) {
				return
			}
			if sub != nil {
				log.Warn("NATS subscription error (further ones this second not logged)", "subject", sub.Subject, "error", err)
				return
			}
			log.Warn("NATS connection error (further ones this second not logged)", "error", err)
		}),
	}
}
