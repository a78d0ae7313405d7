package stats

import (
	"fmt"
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"
	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
)

// Metrics are the engine's Prometheus handles, created once so that the
// per-ping path only does atomic adds and histogram updates.
type Metrics struct {
	Clamped        [clock.NumClampReasons]*metrics.Counter
	Released       *metrics.Counter // pings handed to the state machine
	Late           *metrics.Counter
	Gated          *metrics.Counter // fixes the speed gate set aside (package gate)
	Copies         *metrics.Counter // redelivered copies of a device's recent pings, dropped
	Overflow       *metrics.Counter // pings released early because a buffer was full
	QueueFull      *metrics.Counter // pings refused because a shard queue was full
	Transitions    [engine.NumTypes]*metrics.Counter
	Reversals      *metrics.Counter
	Historic       [engine.NumTypes]*metrics.Counter // transitions late pings revealed
	Reconciled     *metrics.Counter                  // late pings placed into their device's history
	Steps          *metrics.Counter                  // clock steps detected
	Offset         *Histogram                        // device clock − server clock, per judged ping
	clockStates    [clock.NumStates]atomic.Int64     // devices per clock state, as of each shard's last sweep
	Evicted        *metrics.Counter
	WatermarkLag   *Histogram // ingest wall time − device watermark
	ReleaseLatency *Histogram // monotonic ingest → release from the buffer
	DecideLatency  *Histogram // monotonic ingest → transition decided
	Hold           *Histogram // each device's hold, once per sweep round
}

// LatencyBuckets are the upper bounds, in seconds, of the latency
// histograms: fine around the default 500 ms hold, where the figures sit.
// Prometheus "le" buckets (not VictoriaMetrics' vmrange) so that plain
// Prometheus can take histogram_quantile of them.
var LatencyBuckets = []float64{.001, .005, .01, .025, .05, .1, .2, .3, .4, .45, .5, .505, .51, .525, .55, .6, .75, 1, 2, 5, 10}

// LagBuckets are the upper bounds, in seconds, of the watermark lag: from
// the hold up to store-and-forward backlogs of hours.
var LagBuckets = []float64{.1, .25, .5, .75, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400}

// HoldBuckets are the upper bounds, in seconds, of the per-device hold
// histogram: around the adaptive hold's default bounds.
var HoldBuckets = []float64{0, .05, .1, .15, .2, .25, .3, .4, .5, .75, 1, 2, 5, 30}

// OffsetBuckets are the upper bounds, in seconds, of the clock offset
// histogram: negative for clocks behind the server.
var OffsetBuckets = []float64{-600, -60, -10, -5, -3, -2, -1, -.5, -.25, -.1, 0, .1, .25, .5, 1, 2, 3, 5, 10, 60, 600}

// NewMetrics registers the engine's metrics in set (a fresh private set when
// nil, so that tests and the simulator need no registry).
func NewMetrics(set *metrics.Set) *Metrics {
	if set == nil {
		set = metrics.NewSet()
	}
	m := &Metrics{
		Released:       set.NewCounter(`edgefence_released_total`),
		Late:           set.NewCounter(`edgefence_late_total`),
		Gated:          set.NewCounter(`edgefence_gated_total`),
		Copies:         set.NewCounter(`edgefence_redelivered_copies_total`),
		Overflow:       set.NewCounter(`edgefence_buffer_overflow_total`),
		QueueFull:      set.NewCounter(`edgefence_queue_full_total`),
		Reversals:      set.NewCounter(`edgefence_transition_reversals_total`),
		Evicted:        set.NewCounter(`edgefence_evicted_devices_total`),
		Reconciled:     set.NewCounter(`edgefence_reconciled_late_pings_total`),
		Steps:          set.NewCounter(`edgefence_clock_steps_total`),
		Offset:         NewHistogram(set, `edgefence_clock_offset_seconds`, OffsetBuckets),
		WatermarkLag:   NewHistogram(set, `edgefence_watermark_lag_seconds`, LagBuckets),
		ReleaseLatency: NewHistogram(set, `edgefence_release_latency_seconds`, LatencyBuckets),
		DecideLatency:  NewHistogram(set, `edgefence_decide_latency_seconds`, LatencyBuckets),
		Hold:           NewHistogram(set, `edgefence_device_hold_seconds`, HoldBuckets),
	}
	m.Clamped[clock.ClampNone] = new(metrics.Counter) // unregistered: keeps indexing branch-free
	for _, r := range clock.ClampReasons() {
		m.Clamped[r] = set.NewCounter(fmt.Sprintf(`edgefence_clamped_total{reason=%q}`, r))
	}
	for _, t := range engine.Types() {
		m.Transitions[t] = set.NewCounter(fmt.Sprintf(`edgefence_transitions_total{type=%q}`, t))
		m.Historic[t] = set.NewCounter(fmt.Sprintf(`edgefence_historic_transitions_total{type=%q}`, t))
	}
	for i, name := range clock.StateNames {
		n := &m.clockStates[i]
		set.NewGauge(fmt.Sprintf(`edgefence_clock_devices{state=%q}`, name), func() float64 { return float64(n.Load()) })
	}
	return m
}

// AddClockDevices adds n (negative: takes away) to the devices counted in
// clock state s (clock.StateNames), published as edgefence_clock_devices.
func (m *Metrics) AddClockDevices(s int, n int64) { m.clockStates[s].Add(n) }
