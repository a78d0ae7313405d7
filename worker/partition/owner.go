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

// Config is the part of the worker's configuration a partition runs by;
// worker.Config documents each setting in full.
type Config struct {
	// Engine is each partition's engine's configuration.
	Engine engine.Config
	// Lease is how long a partition stays owned unrenewed: it bounds the
	// waits of a partition's start.
	Lease time.Duration
	// CheckpointEvery is how often a partition's state is saved.
	CheckpointEvery time.Duration
	// DedupWindow is the history stream's duplicate window, which a
	// replay must not reach beyond (replay.go).
	DedupWindow time.Duration
	// Telemetry is the topic filters a ping's topic is read by.
	Telemetry []ingest.TelemetryFilter
	// TransitionPrefix, LateTopic and RejectTopic are where the outputs
	// are published.
	TransitionPrefix string
	LateTopic        string
	RejectTopic      string
	// MaxPayload bounds a ping's payload.
	MaxPayload int
}

// Metrics are the Prometheus handles the partitions update: counters
// shared by all of them, and per-partition values indexed by partition
// number.
type Metrics struct {
	// Pings counts the ping messages read from the stream.
	Pings *metrics.Counter
	// Published counts the outputs the NATS MQTT side acknowledged.
	Published *metrics.Counter
	// Duplicates counts the replayed outputs the history stream held
	// already, not delivered again.
	Duplicates *metrics.Counter
	// PublishRetries counts the history records and MQTT messages
	// published again.
	PublishRetries *metrics.Counter
	// RetainedMends counts the retained messages the server acknowledged
	// without retaining them, sent again.
	RetainedMends *metrics.Counter
	// RetainedPuts and RetainedRetries count the retained bucket's writes
	// and the failed ones made again.
	RetainedPuts    *metrics.Counter
	RetainedRetries *metrics.Counter
	// Checkpoints counts the checkpoints saved.
	Checkpoints *metrics.Counter
	// StaleReplays counts the replays from a checkpoint older than the
	// duplicate window (replay.go).
	StaleReplays *metrics.Counter
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
