package ingest

import (
	"fmt"

	"github.com/VictoriaMetrics/metrics"

	"github.com/edgefence/edgefence/evaluator/payload"
)

// Metrics are the hook's Prometheus handles, created once at start-up.
type Metrics struct {
	Received *metrics.Counter             // publishes on telemetry topics
	Rejected [numReasons]*metrics.Counter // by reason
	Ignored  *metrics.Counter             // OwnTracks messages that are not locations
	Shed     *metrics.Counter             // QoS 0 pings dropped: engine queue full
	Refused  *metrics.Counter             // QoS 1 pings refused for a retry: engine queue full
	Dropped  *metrics.Counter             // messages mochi dropped for a slow subscriber

	// LoRaWAN uplinks: routed but not evaluated when they carry no
	// position or repeat a frame counter; by time source when accepted.
	NoPosition *metrics.Counter
	Duplicate  *metrics.Counter
	TimeSource [8]*metrics.Counter // by payload.TimeSource
}

// NewMetrics registers the hook's metrics in set.
func NewMetrics(set *metrics.Set) *Metrics {
	m := &Metrics{
		Received: set.NewCounter(`edgefence_pings_received_total`),
		Ignored:  set.NewCounter(`edgefence_pings_ignored_total`),
		Shed:     set.NewCounter(`edgefence_shed_total{stage="queue"}`),
		Refused:  set.NewCounter(`edgefence_refused_total{reason="queue_full"}`),
		Dropped:  set.NewCounter(`edgefence_shed_total{stage="subscriber"}`),
	}
	for i := range m.Rejected {
		m.Rejected[i] = new(metrics.Counter) // unused slots stay unregistered
	}
	for _, r := range payload.Reasons() {
		// r.String(), not r: fmt prefers Error() for a value that is an error.
		m.Rejected[r] = set.NewCounter(fmt.Sprintf(`edgefence_rejected_total{reason=%q}`, r.String()))
	}
	for _, r := range []reason{reasonDeviceID, reasonDeviceMismatch} {
		m.Rejected[r] = set.NewCounter(fmt.Sprintf(`edgefence_rejected_total{reason=%q}`, r.String()))
	}
	m.NoPosition = set.NewCounter(`edgefence_uplinks_no_position_total`)
	m.Duplicate = set.NewCounter(`edgefence_uplinks_duplicate_total`)
	for i := range m.TimeSource {
		m.TimeSource[i] = new(metrics.Counter)
	}
	for _, s := range []payload.TimeSource{payload.SourceDevice, payload.SourceGatewayGPS, payload.SourceNetwork, payload.SourceNone} {
		m.TimeSource[s] = set.NewCounter(fmt.Sprintf(`edgefence_uplinks_total{time_source=%q}`, s.String()))
	}
	return m
}
