// Package worker is scale-out mode: an edgefence worker on a NATS
// JetStream cluster owns a share of the device partitions, runs the
// engine on each partition's ping stream in order, checkpoints its state,
// and publishes transitions to a JetStream history stream and the
// retained ones' current values to a KV bucket, which every serve
// --cluster node follows for its dashboards (and, optionally, over MQTT
// to the NATS nodes' MQTT side, which retains them). It
// imports no broker: like bridge, it is a client-side part wired from cmd.
// docs/scale-out.md is the design.
package worker

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/stats"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/worker/security"
	"github.com/edgefence/edgefence/worker/subjects"
)

// Config is a worker's configuration. Start from DefaultConfig.
type Config struct {
	// NATS is the cluster's client URLs, comma-separated.
	NATS string
	// MQTT is the NATS nodes' MQTT listeners (host:port, comma-separated):
	// transitions are published there too so that the server retains
	// them. An address may name its scheme, tcp:// or tls://; a bare one
	// is TLS when Security has TLS settings. Empty (the default): no NATS
	// MQTT side, dashboards connect to serve --cluster nodes.
	MQTT string
	// Security is the credentials and TLS settings of both connections.
	Security security.Settings
	// Name identifies the worker in leases; unique per running worker.
	Name string
	// Partitions is P, the number of device partitions: the servers'
	// subject mapping must use the same (partition(P, ...)).
	Partitions int
	// Replicas of the streams, the lease bucket and the checkpoints.
	Replicas int
	// Lease is how long a partition stays owned without its owner
	// renewing it: a dead worker's partitions move after it.
	Lease time.Duration
	// CheckpointEvery is how often an owned partition's state is saved.
	CheckpointEvery time.Duration
	// DedupWindow is the history stream's duplicate window: a replay
	// after a takeover must not reach further back (checkpoint age plus
	// lease, with room).
	DedupWindow time.Duration
	// PingsMaxAge is how long the ping stream keeps pings.
	PingsMaxAge time.Duration

	Engine           engine.Config
	Fences           string
	Telemetry        []ingest.TelemetryFilter
	TransitionPrefix string
	LateTopic        string
	RejectTopic      string
	MaxPayload       int

	HTTPAddr string
	Pprof    bool
	Log      *slog.Logger

	// Metrics, when set, is where the worker's metrics go instead of a
	// set of its own: serve --cluster runs a worker in its process and
	// serves them on its own /metrics. EngineMetrics are then the engine's
	// handles already in Metrics (the broker's); the worker's decoding of
	// the stream, which the broker counted when it took the pings, is not
	// counted again.
	Metrics       *metrics.Set
	EngineMetrics *stats.Metrics
}

// Defaults of Config.
const (
	DefaultPartitions      = 16
	DefaultLease           = 5 * time.Second
	DefaultCheckpointEvery = 5 * time.Second
	DefaultDedupWindow     = 10 * time.Minute
	DefaultPingsMaxAge     = 24 * time.Hour
)

// DefaultConfig returns the defaults: a local cluster's client port, no
// NATS MQTT side, 16 partitions, R3.
func DefaultConfig() Config {
	host, _ := os.Hostname()
	return Config{
		NATS:             "nats://127.0.0.1:4222",
		Name:             fmt.Sprintf("%s-%d", host, os.Getpid()),
		Partitions:       DefaultPartitions,
		Replicas:         3,
		Lease:            DefaultLease,
		CheckpointEvery:  DefaultCheckpointEvery,
		DedupWindow:      DefaultDedupWindow,
		PingsMaxAge:      DefaultPingsMaxAge,
		Engine:           engine.DefaultConfig(),
		Fences:           "fences.geojson",
		Telemetry:        defaultFilters(),
		TransitionPrefix: "geofence",
		LateTopic:        "edgefence/late",
		RejectTopic:      "edgefence/rejected",
		MaxPayload:       4096,
		HTTPAddr:         "127.0.0.1:9090",
	}
}

func defaultFilters() []ingest.TelemetryFilter {
	tf, err := ingest.ParseTelemetryFilters(subjects.DefaultTelemetryFilters)
	if err != nil {
		panic(err) // the defaults are constants
	}
	return tf
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("invalid worker configuration")

// Validate reports the first setting a worker cannot run with.
func (c *Config) Validate() error {
	switch {
	case strings.TrimSpace(c.NATS) == "":
		return fmt.Errorf("%w: no NATS URL", ErrConfig)
	case c.Name == "" || strings.ContainsAny(c.Name, ".*> \t"):
		return fmt.Errorf("%w: worker name %q must be non-empty without '.', '*', '>' or spaces", ErrConfig, c.Name)
	case c.Partitions < 1 || c.Partitions > 1024:
		return fmt.Errorf("%w: partitions %d: want 1 to 1024", ErrConfig, c.Partitions)
	case c.Replicas < 1 || c.Replicas > 5:
		return fmt.Errorf("%w: replicas %d: want 1 to 5", ErrConfig, c.Replicas)
	case c.Lease < 2*time.Second:
		// An owner stops a second before its lease can expire: a 1s lease
		// would leave it no time to run.
		return fmt.Errorf("%w: lease %v: at least 2s", ErrConfig, c.Lease)
	case c.CheckpointEvery <= 0 || c.DedupWindow < 2*(c.CheckpointEvery+c.Lease):
		return fmt.Errorf("%w: duplicate window %v must cover twice the checkpoint period %v plus the lease %v", ErrConfig, c.DedupWindow, c.CheckpointEvery, c.Lease)
	case c.PingsMaxAge < c.DedupWindow:
		return fmt.Errorf("%w: the ping stream's max age %v is shorter than the duplicate window %v", ErrConfig, c.PingsMaxAge, c.DedupWindow)
	}
	if err := c.Security.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return c.Engine.Validate()
}
