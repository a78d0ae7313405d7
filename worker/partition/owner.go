package partition

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/stats"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/worker/checkpoint"
	"github.com/edgefence/edgefence/worker/cluster"
)

// Owner is what a partition uses of the worker that owns it: the
// connections, stores, settings and counters all its partitions share.
// The worker builds it once, after it connected, and does not change it
// while partitions run.
type Owner struct {
	// Conn is the worker's cluster connection.
	Conn *cluster.Conn
	// Store is the checkpoint store: the partitions' saved states and
	// the fence versions.
	Store *checkpoint.Store
	// Config is the worker's settings a partition runs by.
	Config Config
	// Log is the worker's logger.
	Log *slog.Logger
	// Metrics are the counters a partition keeps, beside the worker's.
	Metrics *Metrics
	// EngineMetrics are the engine's handles, IngestMetrics the ingest
	// path's (the worker's decoding of the stream).
	EngineMetrics *stats.Metrics
	IngestMetrics *ingest.Metrics
	// Clamper checks the stamps of accepted pings (Config.Engine's).
	Clamper clock.Clamper
	// Mono is the worker's monotonic clock, in ns since it started:
	// Partition.ValidUntil is judged on it, so that a wall clock step
	// cannot extend a lease.
	Mono func() int64
	// FencesSaved is called when a checkpoint saved a fence version
	// other than the partition's one before, which may be needed no
	// more: it asks the worker's fence collector to run. It must not
	// block.
	FencesSaved func()
}

// Config is the part of the worker's configuration a partition runs by
// (worker.Config has their documentation).
type Config struct {
	Engine           engine.Config
	Lease            time.Duration
	CheckpointEvery  time.Duration
	DedupWindow      time.Duration
	Telemetry        []ingest.TelemetryFilter
	TransitionPrefix string
	LateTopic        string
	RejectTopic      string
	MaxPayload       int
}

// Metrics are the Prometheus handles the partitions update: counters
// shared by all of them, and per-partition values indexed by partition
// number.
type Metrics struct {
	Pings           *metrics.Counter
	Published       *metrics.Counter
	Duplicates      *metrics.Counter
	PublishRetries  *metrics.Counter
	RetainedMends   *metrics.Counter
	RetainedPuts    *metrics.Counter
	RetainedRetries *metrics.Counter
	Checkpoints     *metrics.Counter
	StaleReplays    *metrics.Counter
	// Lag is, per partition, the messages in the stream beyond the last
	// applied: stored by the partition as it applies them and by the
	// worker's watchdog each round.
	Lag []atomic.Int64
	// CheckpointAt is, per partition, the Unix ns of the last
	// checkpoint, 0 when not owned: stored by the partition on each
	// checkpoint, and by the worker as it takes and gives partitions up.
	CheckpointAt []atomic.Int64
}

// NewMetrics registers the partitions' counters in set, with
// per-partition values for partitions partitions.
func NewMetrics(set *metrics.Set, partitions int) *Metrics {
	return &Metrics{
		Pings:           set.NewCounter(`edgefence_worker_pings_total`),
		Published:       set.NewCounter(`edgefence_worker_published_total`),
		Duplicates:      set.NewCounter(`edgefence_worker_replayed_duplicates_total`),
		PublishRetries:  set.NewCounter(`edgefence_worker_publish_retries_total`),
		RetainedMends:   set.NewCounter(`edgefence_worker_retained_resent_total`),
		RetainedPuts:    set.NewCounter(`edgefence_worker_retained_writes_total`),
		RetainedRetries: set.NewCounter(`edgefence_worker_retained_write_retries_total`),
		Checkpoints:     set.NewCounter(`edgefence_worker_checkpoints_total`),
		StaleReplays:    set.NewCounter(`edgefence_worker_stale_replays_total`),
		Lag:             make([]atomic.Int64, partitions),
		CheckpointAt:    make([]atomic.Int64, partitions),
	}
}
