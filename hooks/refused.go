package hooks

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// refusedMetric counts the publishes the access hook refuses.
const refusedMetric = `edgefence_publishes_not_authorized_total`

// logTopicMax bounds the topic a refusal's log line quotes: a topic may be
// as long as a packet.
const logTopicMax = 256

// publishRefusals counts the publishes the ACL refuses and logs them, one
// line a second at most: a device retrying a refused publish (over MQTT
// 3.1.1 it reconnects each time) must not flood the log. mochi's own line
// on such a refusal, which held the whole packet, is dropped (mochilog).
type publishRefusals struct {
	count  *metrics.Counter
	logged atomic.Int64 // Unix second of the last line
}

// refused counts a refused publish of cl on topic and logs it if no
// refusal was logged this second.
func (r *publishRefusals) refused(log *slog.Logger, cl *mqtt.Client, topic string) {
	r.count.Inc()
	now := time.Now().Unix()
	if last := r.logged.Load(); last == now || !r.logged.CompareAndSwap(last, now) {
		return
	}
	if len(topic) > logTopicMax {
		topic = topic[:logTopicMax] + "…"
	}
	log.Warn("refused publish: the client may not publish on this topic (further refusals this second are only counted in "+refusedMetric+")",
		"client", cl.ID, "username", string(cl.Properties.Username), "topic", topic,
		"reason", packets.ErrNotAuthorized.Reason, "remote", cl.Net.Remote)
}
