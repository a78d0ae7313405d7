// Package broker wires edgefence's embedded MQTT broker: mochi-mqtt with
// the telemetry hook, the engine, the transition publisher, persistence of
// retained state, and the HTTP endpoints.
package broker

import (
	"log/slog"
	"time"

	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/hooks"
)

// Config is the broker's configuration, filled by the CLI.
type Config struct {
	MQTTAddr         string        // TCP listener; ":0" picks a free port
	HTTPAddr         string        // metrics and health; "" disables
	Fences           string        // GeoJSON fence file
	FencesPoll       time.Duration // reload the fence file when it changes, checked this often; 0 disables
	DataDir          string        // retained state store; "" keeps it in memory
	Telemetry        []hooks.TelemetryFilter
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
	Engine           evaluator.Config
	Log              *slog.Logger

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
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	var tf []hooks.TelemetryFilter
	for _, f := range hooks.DefaultTelemetryFilters {
		t, err := hooks.ParseTelemetryFilter(f)
		if err != nil {
			panic(err) // the defaults are constants
		}
		tf = append(tf, t)
	}
	return Config{
		MQTTAddr:         "127.0.0.1:1883",
		HTTPAddr:         "127.0.0.1:9090",
		Fences:           "fences.geojson",
		FencesPoll:       5 * time.Second,
		DataDir:          "./data",
		Telemetry:        tf,
		TransitionPrefix: "geofence",
		LateTopic:        "edgefence/late",
		RejectTopic:      "edgefence/rejected",
		ExitExpiry:       24 * time.Hour,
		MaxPayload:       4096,
		CloseTimeout:     10 * time.Second,
		CaptureMaxBytes:  capture.DefaultMaxBytes,
		CaptureKeep:      capture.DefaultKeep,
		Engine:           evaluator.DefaultConfig(),
		Log:              slog.Default(),
		TLSAddr:          ":8883",
		MaxPacketSize:    64 << 10,
		MaxConnections:   100_000,
		ConnectTimeout:   10 * time.Second,
		PublishRate:      50,
		PublishBurst:     100,
	}
}
