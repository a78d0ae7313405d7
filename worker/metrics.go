package worker

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// workerMetrics are the worker's own Prometheus handles, beside the
// engine's and the ingest path's, which are serve's.
type workerMetrics struct {
	pings           *metrics.Counter
	published       *metrics.Counter
	duplicates      *metrics.Counter
	publishRetries  *metrics.Counter
	retainedMends   *metrics.Counter
	retainedPuts    *metrics.Counter
	retainedRetries *metrics.Counter
	checkpoints     *metrics.Counter
	acquired        *metrics.Counter
	released        *metrics.Counter
	lost            *metrics.Counter
	reclaimed       *metrics.Counter
	stalledOut      *metrics.Counter
	stalls          *metrics.Counter
	staleReplays    *metrics.Counter
	reloadsOK       *metrics.Counter
	reloadsFailed   *metrics.Counter
	fencesDeleted   *metrics.Counter
	lag             []atomic.Int64              // per partition: messages in the stream beyond the last applied
	ckptAt          []atomic.Int64              // per partition: Unix ns of the last checkpoint, 0 when not owned
	part            []atomic.Pointer[partition] // per partition: nil when not owned
}

func newWorkerMetrics(set *metrics.Set, w *Worker) *workerMetrics {
	p := w.cfg.Partitions
	m := &workerMetrics{
		pings:           set.NewCounter(`edgefence_worker_pings_total`),
		published:       set.NewCounter(`edgefence_worker_published_total`),
		duplicates:      set.NewCounter(`edgefence_worker_replayed_duplicates_total`),
		publishRetries:  set.NewCounter(`edgefence_worker_publish_retries_total`),
		retainedMends:   set.NewCounter(`edgefence_worker_retained_resent_total`),
		retainedPuts:    set.NewCounter(`edgefence_worker_retained_writes_total`),
		retainedRetries: set.NewCounter(`edgefence_worker_retained_write_retries_total`),
		checkpoints:     set.NewCounter(`edgefence_worker_checkpoints_total`),
		acquired:        set.NewCounter(`edgefence_worker_rebalances_total{action="acquired"}`),
		released:        set.NewCounter(`edgefence_worker_rebalances_total{action="released"}`),
		lost:            set.NewCounter(`edgefence_worker_rebalances_total{action="lost"}`),
		reclaimed:       set.NewCounter(`edgefence_worker_rebalances_total{action="reclaimed"}`),
		stalledOut:      set.NewCounter(`edgefence_worker_rebalances_total{action="stalled"}`),
		stalls:          set.NewCounter(`edgefence_worker_partition_stalls_total`),
		staleReplays:    set.NewCounter(`edgefence_worker_stale_replays_total`),
		// serve's names: its reload alert covers the workers too. In a
		// serve --cluster node's set they are serve's own counters.
		reloadsOK:     set.GetOrCreateCounter(`edgefence_fence_reloads_total{result="ok"}`),
		reloadsFailed: set.GetOrCreateCounter(`edgefence_fence_reloads_total{result="error"}`),
		fencesDeleted: set.NewCounter(`edgefence_worker_fence_versions_deleted_total`),
		lag:           make([]atomic.Int64, p),
		ckptAt:        make([]atomic.Int64, p),
		part:          make([]atomic.Pointer[partition], p),
	}
	set.NewGauge(`edgefence_worker_partitions_owned`, func() float64 { return float64(w.owned()) })
	// P, so that an alert can tell partitions nobody owns.
	set.NewGauge(`edgefence_worker_partitions`, func() float64 { return float64(p) })
	for i := range p {
		l := `{partition="` + strconv.Itoa(i) + `"}`
		set.NewGauge(`edgefence_worker_partition_lag`+l, func() float64 {
			if m.ckptAt[i].Load() == 0 {
				return 0
			}
			return float64(m.lag[i].Load())
		})
		// A partition without devices gets no ticks and saves no
		// checkpoints: its checkpoint age grows without harm.
		set.NewGauge(`edgefence_worker_partition_devices`+l, func() float64 {
			if pt := m.part[i].Load(); pt != nil {
				return float64(pt.devices.Load())
			}
			return 0
		})
		set.NewGauge(`edgefence_worker_checkpoint_age_seconds`+l, func() float64 {
			at := m.ckptAt[i].Load()
			if at == 0 {
				return 0
			}
			return time.Since(time.Unix(0, at)).Seconds()
		})
	}
	return m
}
