// Package bridge runs the edgefence engine as an MQTT 5 client of a broker
// a site already has (Mosquitto, EMQX, HiveMQ, or another edgefence): it
// subscribes to the trackers' telemetry there with a persistent session,
// and publishes the transitions, late pings and rejects back to it, with
// the same topics and payloads as edgefence serve. Transitions go through
// an on-disk queue, so a transition decided while the broker is away is
// published when it returns, in order, and survives a restart of the
// bridge.
package bridge

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/ingest"
)

// Config is the bridge's configuration, filled by the CLI.
type Config struct {
	// Upstream is the broker: mqtt://host:port, or mqtts://host:port
	// (TLS; also tls://, ssl://), ws:// or wss://.
	Upstream string
	CA       string // PEM CA bundle to verify the broker's certificate (default: the system pool)
	Cert     string // PEM client certificate, for mutual TLS
	Key      string // its key
	Username string
	Password string
	// ClientID names the bridge's persistent session upstream, so it must
	// be stable across restarts, and unique: two bridges with one id take
	// the session from each other.
	ClientID string
	// SessionExpiry is how long the broker keeps the session (and queues
	// telemetry for it) while the bridge is away.
	SessionExpiry time.Duration
	KeepAlive     time.Duration
	// ConnectTimeout bounds one connection attempt, and the unsubscribe
	// after a restore.
	ConnectTimeout time.Duration
	// ReconnectMin and ReconnectMax bound the delay between connection
	// attempts, which doubles from the first to the second.
	ReconnectMin, ReconnectMax time.Duration
	// ReceiveMaximum is how many QoS 1 telemetry publishes the broker may
	// have unacknowledged with the bridge at once.
	ReceiveMaximum uint16

	QueueDir  string // the outbound queue of transitions
	QueueSync bool   // fsync every queued transition: survive power loss, not only a crash
	// MaxQueued is the circuit breaker: with this many transitions
	// queued, the bridge stops acknowledging telemetry until the queue
	// drains. The queue itself is never refused a transition, so it may
	// pass MaxQueued by what pings already taken still decide.
	MaxQueued int
	// MaxInflight is how many publishes may await their PUBACK at once
	// (one per device at most).
	MaxInflight int

	// RestoreQuiet is how long no retained transition must arrive before
	// the retained state counts as complete; RestoreTimeout bounds the
	// whole restore.
	RestoreQuiet   time.Duration
	RestoreTimeout time.Duration
	// CloseTimeout bounds how long shutdown waits for the queue to drain.
	CloseTimeout time.Duration

	HTTPAddr string // metrics and health; "" disables
	Pprof    bool

	Fences           string
	FencesPoll       time.Duration // reload the fence file when it changes, checked this often; 0 disables
	Telemetry        []ingest.TelemetryFilter
	TransitionPrefix string
	LateTopic        string
	RejectTopic      string
	ExitExpiry       time.Duration // MQTT 5 expiry of retained EXIT messages
	MaxPayload       int           // telemetry payload limit in bytes
	Engine           engine.Config
	Log              *slog.Logger
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Upstream:         "mqtt://127.0.0.1:1883",
		ClientID:         "edgefence-bridge",
		SessionExpiry:    24 * time.Hour,
		KeepAlive:        30 * time.Second,
		ConnectTimeout:   10 * time.Second,
		ReconnectMin:     500 * time.Millisecond,
		ReconnectMax:     30 * time.Second,
		ReceiveMaximum:   1024,
		QueueDir:         "./data/bridge-queue",
		MaxQueued:        100_000,
		MaxInflight:      64,
		RestoreQuiet:     500 * time.Millisecond,
		RestoreTimeout:   30 * time.Second,
		CloseTimeout:     10 * time.Second,
		HTTPAddr:         "127.0.0.1:9090",
		Fences:           "fences.geojson",
		FencesPoll:       5 * time.Second,
		Telemetry:        ingest.DefaultFilters(),
		TransitionPrefix: "geofence",
		LateTopic:        "edgefence/late",
		RejectTopic:      "edgefence/rejected",
		ExitExpiry:       24 * time.Hour,
		MaxPayload:       4096,
		Engine:           engine.DefaultConfig(),
		Log:              slog.Default(),
	}
}

// upstreamSchemes are the URL schemes autopaho dials.
var upstreamSchemes = map[string]bool{"mqtt": true, "tcp": true, "mqtts": true, "ssl": true, "tls": true, "ws": true, "wss": true}

// tlsScheme reports whether a scheme dials TLS.
func tlsScheme(s string) bool { return s == "mqtts" || s == "ssl" || s == "tls" || s == "wss" }

// validate reports the first setting the bridge cannot run with.
func (c *Config) validate() (*url.URL, error) {
	u, err := url.Parse(c.Upstream)
	if err != nil {
		return nil, fmt.Errorf("--upstream %q: %w", c.Upstream, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if !upstreamSchemes[u.Scheme] || u.Host == "" {
		return nil, fmt.Errorf("--upstream %q: want mqtt://host:port or mqtts://host:port (or ws://, wss://)", c.Upstream)
	}
	if u.Port() == "" && u.Scheme != "ws" && u.Scheme != "wss" {
		port := "1883"
		if tlsScheme(u.Scheme) {
			port = "8883"
		}
		u.Host += ":" + port
	}
	if (c.CA != "" || c.Cert != "" || c.Key != "") && !tlsScheme(u.Scheme) {
		return nil, fmt.Errorf("--ca, --cert and --key need an mqtts:// (or wss://) upstream, got %s://", u.Scheme)
	}
	if (c.Cert == "") != (c.Key == "") {
		return nil, errors.New("--cert and --key go together")
	}
	switch {
	case c.ClientID == "":
		return nil, errors.New("--client-id: a persistent session needs a stable client id")
	case len(c.Telemetry) == 0:
		return nil, errors.New("no --telemetry-topic")
	case c.TransitionPrefix == "" || strings.ContainsAny(c.TransitionPrefix, "+#"):
		return nil, fmt.Errorf("--transition-prefix %q: want a topic without wildcards", c.TransitionPrefix)
	case c.ExitExpiry < time.Second || c.ExitExpiry > math.MaxUint32*time.Second:
		return nil, fmt.Errorf("exit expiry %v: must be between 1s and %v (an MQTT 5 expiry is whole seconds)", c.ExitExpiry, math.MaxUint32*time.Second)
	case c.SessionExpiry < time.Second || c.SessionExpiry > math.MaxUint32*time.Second:
		return nil, fmt.Errorf("--session-expiry %v: must be between 1s and %v", c.SessionExpiry, math.MaxUint32*time.Second)
	case c.KeepAlive < time.Second || c.KeepAlive > math.MaxUint16*time.Second:
		return nil, fmt.Errorf("--keepalive %v: must be between 1s and %v", c.KeepAlive, math.MaxUint16*time.Second)
	case c.QueueDir == "":
		return nil, errors.New("--queue-dir: the outbound queue needs a directory")
	case c.MaxQueued < 1 || c.MaxInflight < 1 || c.ReceiveMaximum < 1:
		return nil, errors.New("--max-queued, --max-inflight and --receive-maximum must be at least 1")
	case c.ReconnectMin <= 0 || c.ReconnectMax < c.ReconnectMin:
		return nil, errors.New("--reconnect-min must be positive and at most --reconnect-max")
	case c.RestoreQuiet <= 0 || c.RestoreTimeout < c.RestoreQuiet:
		return nil, errors.New("--restore-quiet must be positive and at most --restore-timeout")
	case c.ConnectTimeout <= 0 || c.CloseTimeout < 0:
		return nil, errors.New("--connect-timeout must be positive, --close-timeout not negative")
	}
	for i := range c.Telemetry {
		tf := &c.Telemetry[i]
		for _, own := range []string{c.TransitionPrefix + "/f/d", c.LateTopic + "/d", c.RejectTopic + "/d"} {
			if _, ok, _ := tf.Match(own); ok {
				return nil, fmt.Errorf("--telemetry-topic %s matches the bridge's own output (%s): it would read back what it publishes", tf.Filter, own)
			}
		}
	}
	return u, c.Engine.Validate()
}
