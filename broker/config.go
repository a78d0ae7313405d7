// Package broker wires edgefence's embedded MQTT broker: mochi-mqtt with
// the telemetry hook, the engine, the transition publisher, persistence of
// retained state, and the HTTP endpoints.
package broker

import (
	"errors"
	"log/slog"
	"time"

	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/pingstream"
)

// Config is the broker's configuration, filled by the CLI.
type Config struct {
	MQTTAddr         string        // TCP listener; ":0" picks a free port
	HTTPAddr         string        // metrics and health; "" disables
	HTTPIdleTimeout  time.Duration // closes idle keep-alive HTTP connections; 0: ops.DefaultIdleTimeout
	HTTPMaxConns     int           // HTTP connections served at once; 0: ops.DefaultMaxConns
	Fences           string        // GeoJSON fence file
	FencesPoll       time.Duration // reload the fence file when it changes, checked this often; 0 disables
	DataDir          string        // retained state store; "" keeps it in memory
	Telemetry        []ingest.TelemetryFilter
	TransitionPrefix string
	LateTopic        string
	RejectTopic      string
	ExitExpiry       time.Duration // MQTT 5 expiry of retained EXIT messages
	MaxPayload       int           // telemetry payload limit in bytes
	Pprof            bool
	CloseTimeout     time.Duration // how long shutdown waits for mochi
	Capture          string        // capture file of every accepted ping; "" disables
	CaptureMaxBytes  int64         // capture file size that triggers a rotation
	CaptureKeep      int           // rotated capture files kept
	Engine           engine.Config
	Log              *slog.Logger
	MapTiles         string // the live page's base map: a tile URL template or directory (dashboard.ParseTiles); "" draws none
	MapAttribution   string // the tile provider's credit, shown on the map
	HomeAssistant    string // Home Assistant discovery prefix; "" disables discovery
	OwnTracksEvents  bool   // publish transitions of OwnTracks devices as OwnTracks events

	// Security.
	Auth           string        // YAML user file; "" = anonymous
	AllowAnonymous bool          // permit anonymous access on non-loopback listeners
	TLSCert        string        // PEM certificate for the MQTTS (and secure WebSocket) listener
	TLSKey         string        // its key
	TLSClientCA    string        // PEM CA bundle: verify client certificates (mutual TLS; CN = username)
	TLSAddr        string        // MQTTS listener, used when TLSCert is set
	WSAddr         string        // MQTT over WebSocket listener; "" disables
	MaxPacketSize  uint32        // largest MQTT packet accepted, bytes
	MaxConnections int64         // connected clients at most
	ConnectTimeout time.Duration // a connection must send CONNECT within this
	PublishRate    float64       // publishes per second per client; 0 disables the limit
	PublishBurst   int           // burst above the rate

	// MaxSessionExpiry bounds how long a session is kept after its
	// connection ends, whatever the client asks (MQTT 3.1.1 sessions are
	// kept exactly this long); with --auth a fixed client id is its
	// user's as long as its session is kept.
	MaxSessionExpiry time.Duration

	// StrictClientIDs requires a device's client id to be its username
	// or to start with "username/" (hooks.Access.RequireOwnClientIDs).
	StrictClientIDs bool

	// EngineOff runs a bare mochi broker with the same listeners, access
	// control and limits, and no telemetry hook, engine, publisher or
	// store: the load harness's baseline for the cost of the engine.
	EngineOff bool

	// Cluster, when set (serve --cluster), sends every accepted ping to
	// the cluster's JetStream ping stream, acknowledged to its tracker
	// once stored there, instead of to the local engine: the partitions'
	// workers evaluate. Its Telemetry, Metrics and Log are the broker's.
	Cluster *pingstream.Options

	// mochi's per-client resources, sized for trackers that mostly
	// publish small pings (each is paid 10,000 times over at 10,000
	// trackers).
	ClientReadBuffer  int    // bytes of each connection's read buffer
	ClientWriteBuffer int    // bytes of outbound writes coalesced before a flush
	ClientQueue       int32  // outbound messages queued per client; a subscriber that falls further behind loses messages (shed_total{stage="subscriber"}); 0: ClientQueueFor
	MaxInflight       uint16 // outbound QoS 1/2 messages awaiting an acknowledgement per client
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		MQTTAddr:          "127.0.0.1:1883",
		HTTPAddr:          "127.0.0.1:9090",
		Fences:            "fences.geojson",
		FencesPoll:        5 * time.Second,
		DataDir:           "./data",
		Telemetry:         ingest.DefaultFilters(),
		TransitionPrefix:  "geofence",
		LateTopic:         "edgefence/late",
		RejectTopic:       "edgefence/rejected",
		ExitExpiry:        24 * time.Hour,
		MaxPayload:        4096,
		CloseTimeout:      10 * time.Second,
		CaptureMaxBytes:   capture.DefaultMaxBytes,
		CaptureKeep:       capture.DefaultKeep,
		Engine:            engine.DefaultConfig(),
		Log:               slog.Default(),
		TLSAddr:           ":8883",
		MaxPacketSize:     64 << 10,
		MaxConnections:    100_000,
		ConnectTimeout:    10 * time.Second,
		MaxSessionExpiry:  time.Hour,
		PublishRate:       50,
		PublishBurst:      100,
		ClientReadBuffer:  DefaultClientReadBuffer,
		ClientWriteBuffer: DefaultClientWriteBuffer,
		ClientQueue:       0, // ClientQueueFor
		MaxInflight:       DefaultMaxInflight,
	}
}

// Defaults of mochi's per-client resources, sized for trackers that
// mostly publish (mochi's own are 2 KiB, 2 KiB, 8192 and 8192). The
// outbound queue is mochi's bound: the patched mochi grows each client's
// queue with what is queued (third_party patch 0008), so a tracker, whose
// PUBACKs do not use it, pays nothing for it, and a dashboard has room for
// the burst of ENTERs of a fleet's first pings. The read buffer holds a
// burst of 8 pings of ~115 bytes (a gateway forwarding for many devices,
// a tracker catching up) in one read.
const (
	DefaultClientReadBuffer  = 1024
	DefaultClientWriteBuffer = 2048
	DefaultClientQueue       = 8192
	// DefaultMaxInflight is mochi's own default. Inflight messages live
	// in a map that grows only with what is in flight, so trackers do not
	// pay for it; a dashboard does when it acknowledges slowly, and at 1024
	// the load harness's dashboard lost thousands of transitions a second
	// at 70k pings/s (edgefence_shed_total{stage="subscriber_inflight"}).
	DefaultMaxInflight = 8192
)

// ClientQueueFor is the outbound queue per client a configuration gets:
// ClientQueue if set, or DefaultClientQueue.
func (c *Config) ClientQueueFor() int32 {
	if c.ClientQueue > 0 {
		return c.ClientQueue
	}
	return DefaultClientQueue
}

// validateClients checks mochi's per-client settings.
func (c *Config) validateClients() error {
	switch {
	case c.ClientReadBuffer < 16:
		return errors.New("--client-read-buffer: want at least 16 bytes")
	case c.ClientWriteBuffer < 0:
		return errors.New("--client-write-buffer: want 0 or more bytes")
	case c.ClientQueue < 0:
		return errors.New("--client-queue: want at least 1 message (0: the default)")
	case c.MaxInflight < 1:
		return errors.New("--max-inflight: want at least 1 message")
	}
	return nil
}
