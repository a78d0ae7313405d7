package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/bridge"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/cmdhelp"
)

// bridgeFlags binds every bridge flag to cfg; ff fills them from the
// command line, EDGEFENCE_* environment variables and a config file.
// The groups are the headings of bridge --help.
func bridgeFlags(cfg *bridge.Config, topics *ingest.TopicFlags, receiveMax *int, proc *processFlags) (*flag.FlagSet, *cmdhelp.Groups) {
	fs := flag.NewFlagSet("edgefence bridge", flag.ContinueOnError)
	g := new(cmdhelp.Groups)
	g.Group(fs, "upstream", func() {
		fs.StringVar(&cfg.Upstream, "upstream", cfg.Upstream, "the broker: mqtt://host:port or mqtts://host:port (also ws://, wss://)")
		fs.StringVar(&cfg.CA, "ca", cfg.CA, "PEM CA bundle to verify an mqtts:// broker (default: the system's)")
		fs.StringVar(&cfg.Cert, "cert", cfg.Cert, "PEM client certificate for mqtts:// (mutual TLS)")
		fs.StringVar(&cfg.Key, "key", cfg.Key, "PEM key of --cert")
		fs.StringVar(&cfg.Username, "username", cfg.Username, "MQTT username")
		fs.StringVar(&cfg.Password, "password", cfg.Password, "MQTT password (prefer EDGEFENCE_PASSWORD or --config: the command line is visible to other users)")
		fs.StringVar(&cfg.ClientID, "client-id", cfg.ClientID, "MQTT client id of the persistent session: stable across restarts, unique per bridge")
		fs.DurationVar(&cfg.SessionExpiry, "session-expiry", cfg.SessionExpiry, "how long the broker keeps the session (and queues telemetry) while the bridge is away")
		fs.DurationVar(&cfg.KeepAlive, "keepalive", cfg.KeepAlive, "MQTT keepalive")
		fs.DurationVar(&cfg.ConnectTimeout, "connect-timeout", cfg.ConnectTimeout, "bound of one connection attempt")
		fs.DurationVar(&cfg.ReconnectMin, "reconnect-min", cfg.ReconnectMin, "first delay between connection attempts")
		fs.DurationVar(&cfg.ReconnectMax, "reconnect-max", cfg.ReconnectMax, "longest delay between connection attempts")
		fs.IntVar(receiveMax, "receive-maximum", *receiveMax, "QoS 1 telemetry publishes the broker may have unacknowledged with the bridge (1-65535)")
	})
	g.Group(fs, "engine", func() {
		fs.StringVar(&cfg.Fences, "fences", cfg.Fences, "GeoJSON fence file (reloaded on SIGHUP and on change)")
		fs.DurationVar(&cfg.FencesPoll, "fences-poll", cfg.FencesPoll, "check the fence file for changes this often (0: only on SIGHUP)")
		topics.Register(fs, "telemetry topic filter: FILTER or FILTER=auto|canonical|owntracks|chirpstack|ttn, a LoRaWAN format optionally with a field mapping (FILTER=chirpstack,lat=gps.lat,lon=gps.lng; docs/lorawan.md); '+' levels are the device id; $share/<group>/FILTER for a shared subscription")
		fs.IntVar(&cfg.MaxPayload, "max-payload", cfg.MaxPayload, "telemetry payload limit in bytes")
		engineFlags(fs, &cfg.Engine)
	})
	g.Group(fs, "output", func() {
		fs.StringVar(&cfg.TransitionPrefix, "transition-prefix", cfg.TransitionPrefix, "transitions go to PREFIX/<fence>/<device>, retained")
		fs.StringVar(&cfg.LateTopic, "late-topic", cfg.LateTopic, "late pings go to TOPIC/<device>")
		fs.StringVar(&cfg.RejectTopic, "reject-topic", cfg.RejectTopic, "rejected payloads go to TOPIC/<device>")
		fs.DurationVar(&cfg.ExitExpiry, "exit-expiry", cfg.ExitExpiry, "MQTT 5 message expiry of retained EXIT messages")
		fs.StringVar(&cfg.QueueDir, "queue-dir", cfg.QueueDir, "directory of the outbound queue of transitions")
		fs.BoolVar(&cfg.QueueSync, "queue-sync", cfg.QueueSync, "fsync each queued transition: survive power loss, not only a crash (slower)")
		fs.IntVar(&cfg.MaxQueued, "max-queued", cfg.MaxQueued, "circuit breaker: with this many transitions queued, stop acknowledging telemetry until the queue drains")
		fs.IntVar(&cfg.MaxInflight, "max-inflight", cfg.MaxInflight, "publishes awaiting a PUBACK at once (one per device)")
		fs.DurationVar(&cfg.RestoreQuiet, "restore-quiet", cfg.RestoreQuiet, "at start, the retained state is complete after this long without a retained transition")
		fs.DurationVar(&cfg.RestoreTimeout, "restore-timeout", cfg.RestoreTimeout, "bound of reading the retained state at start")
		fs.DurationVar(&cfg.CloseTimeout, "close-timeout", cfg.CloseTimeout, "how long shutdown waits for the queue to drain upstream")
	})
	g.Group(fs, "ops", func() {
		fs.String("config", "", "config file: one 'flag value' per line (e.g. 'hold 750ms')")
		fs.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "HTTP address for /metrics, /healthz, /readyz (empty: off)")
		fs.BoolVar(&cfg.Pprof, "pprof", cfg.Pprof, "serve /debug/pprof/ on the HTTP address")
		proc.register(fs)
	})
	return fs, g
}

func bridgeCommand() *ffcli.Command {
	cfg := bridge.DefaultConfig()
	topics := ingest.NewTopicFlags()
	receiveMax := int(cfg.ReceiveMaximum)
	proc := defaultProcessFlags()
	fs, groups := bridgeFlags(&cfg, topics, &receiveMax, &proc)
	return &ffcli.Command{
		Name:       "bridge",
		ShortUsage: "edgefence bridge --upstream mqtt://host:1883 [flags]",
		ShortHelp:  "run the engine as a client of an existing MQTT broker",
		LongHelp: "Run the geofence engine against a broker the site already has (Mosquitto, EMQX,\n" +
			"HiveMQ, ...): subscribe to the telemetry there with a persistent MQTT 5 session,\n" +
			"and publish transitions, late pings and rejects back to it, as serve would.\n" +
			"Transitions go through an on-disk queue. Every flag can also be set as an\n" +
			"EDGEFENCE_* environment variable (EDGEFENCE_PASSWORD=...) or in the --config file.",
		FlagSet:   fs,
		Options:   configOptions(),
		UsageFunc: usageFunc(groups),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cmdhelp.NoArguments("edgefence bridge", args)
			}
			var err error
			if cfg.Log, err = proc.setup(); err != nil {
				return err
			}
			if receiveMax < 1 || receiveMax > 65535 {
				return fmt.Errorf("--receive-maximum %d: want 1 to 65535", receiveMax)
			}
			cfg.ReceiveMaximum = uint16(receiveMax)
			if cfg.Telemetry, err = topics.Filters(); err != nil {
				return err
			}
			return runBridge(ctx, cfg)
		},
	}
}

// runBridge runs until ctx is done (SIGINT, SIGTERM), reloading the fences
// on SIGHUP.
func runBridge(ctx context.Context, cfg bridge.Config) error {
	b, err := bridge.Start(cfg)
	if err != nil {
		return err
	}
	return runUntilDone(ctx, cfg.Log, b)
}
