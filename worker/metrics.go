package worker

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/edgefence/edgefence/worker/partition"
)

// workerMetrics are the worker's own Prometheus handles, beside the
// engine's and the ingest path's, which are serve's: the partitions'
// (package partition) and the owner's.
type workerMetrics struct {
	*partition.Metrics
	acquired      *metrics.Counter
	released      *metrics.Counter
	lost          *metrics.Counter
	reclaimed     *metrics.Counter
	stalledOut    *metrics.Counter
	stalls        *metrics.Counter
	reloadsOK     *metrics.Counter
	reloadsFailed *metrics.Counter
	fencesDeleted *metrics.Counter
	part          []atomic.Pointer[partition.Partition] // per partition: nil when not owned
}

func newWorkerMetrics(set *metrics.Set, w *Worker) *workerMetrics {
	p := w.cfg.Partitions
	m := &workerMetrics{
		Metrics:    partition.NewMetrics(set, p),
		acquired:   set.NewCounter(`edgefence_worker_rebalances_total{action="acquired"}`),
		released:   set.NewCounter(`edgefence_worker_rebalances_total{action="released"}`),
		lost:       set.NewCounter(`edgefence_worker_rebalances_total{action="lost"}`),
		reclaimed:  set.NewCounter(`edgefence_worker_rebalances_total{action="reclaimed"}`),
		stalledOut: set.NewCounter(`edgefence_worker_rebalances_total{action="stalled"}`),
		stalls:     set.NewCounter(`edgefence_worker_partition_stalls_total`),
		// serve's names: its reload alert covers the workers too. In a
		// serve --cluster node's set they are serve's own counters.
		reloadsOK:     set.GetOrCreateCounter(`edgefence_fence_reloads_total{result="ok"}`),
		reloadsFailed: set.GetOrCreateCounter(`edgefence_fence_reloads_total{result="error"}`),
		fencesDeleted: set.NewCounter(`edgefence_worker_fence_versions_deleted_total`),
		part:          make([]atomic.Pointer[partition.Partition], p),
	}
	set.NewGauge(`edgefence_worker_partitions_owned`, func() float64 { return float64(w.owned()) })
	// P, so that an alert can tell partitions nobody owns.
	set.NewGauge(`edgefence_worker_partitions`, func() float64 { return float64(p) })
	for i := range p {
		l := `{partition="` + strconv.Itoa(i) + `"}`
		set.NewGauge(`edgefence_worker_partition_lag`+l, func() float64 {
			if m.CheckpointAt[i].Load() == 0 {
				return 0
			}
			return float64(m.Lag[i].Load())
		})
		// A partition without devices gets no ticks and saves no
		// checkpoints: its checkpoint age grows without harm.
		set.NewGauge(`edgefence_worker_partition_devices`+l, func() float64 {
			if pt := m.part[i].Load(); pt != nil {
				return float64(pt.Devices())
			}
			return 0
		})
		set.NewGauge(`edgefence_worker_checkpoint_age_seconds`+l, func() float64 {
			at := m.CheckpointAt[i].Load()
			if at == 0 {
				return 0
			}
			return time.Since(time.Unix(0, at)).Seconds()
		})
	}
	return m
}
