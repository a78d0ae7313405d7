package bridge

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/edgefence/edgefence/evaluator/stats"
)

// bridgeMetrics are the bridge's own handles; the engine's and the
// telemetry reader's are serve's (stats.NewMetrics, ingest.NewMetrics).
type bridgeMetrics struct {
	publishLatency *stats.Histogram // ingest → PUBACK from upstream
	publishErrors  *metrics.Counter // failed publish attempts (retried unless set aside)
	sideShed       *metrics.Counter // late and reject reports dropped
	queueErrors    *metrics.Counter // failed queue writes (retried)
	setAside       *metrics.Counter // entries upstream refused for good
	connects       *metrics.Counter
	breakerTrips   *metrics.Counter
}

func (b *Bridge) registerMetrics(set *metrics.Set) {
	b.m = bridgeMetrics{
		publishLatency: stats.NewHistogram(set, `edgefence_publish_latency_seconds`, stats.LatencyBuckets),
		publishErrors:  set.NewCounter(`edgefence_publish_errors_total`),
		sideShed:       set.NewCounter(`edgefence_shed_total{stage="side_output"}`),
		queueErrors:    set.NewCounter(`edgefence_bridge_queue_errors_total`),
		setAside:       set.NewCounter(`edgefence_bridge_set_aside_total`),
		connects:       set.NewCounter(`edgefence_bridge_connects_total`),
		breakerTrips:   set.NewCounter(`edgefence_bridge_breaker_trips_total`),
	}
	b.engine.RegisterGauges(set)
	set.NewGauge(`edgefence_publish_queue`, func() float64 {
		d, v := b.queue.Lens()
		return float64(d + v)
	})
	set.NewGauge(`edgefence_bridge_queued_transitions`, func() float64 {
		d, _ := b.queue.Lens()
		return float64(d)
	})
	set.NewGauge(`edgefence_bridge_connected`, func() float64 { return bool01(b.connected.Load()) })
	set.NewGauge(`edgefence_bridge_unacked`, func() float64 { return float64(b.inbox.unacked.Load()) })
	set.NewGauge(`edgefence_bridge_breaker_open`, func() float64 { return bool01(b.breakerOpen.Load()) })
	set.NewGauge(`edgefence_bridge_restored_states`, func() float64 { return float64(b.restored.Load()) })
}

func bool01(v bool) float64 {
	if v {
		return 1
	}
	return 0
}
