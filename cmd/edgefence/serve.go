package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/homeassistant"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/cmdhelp"
	"github.com/edgefence/edgefence/internal/flagvalue"
)

// optionalPrefix is a flag that is a switch or takes a value:
// --homeassistant turns it on with the default prefix,
// --homeassistant=PREFIX with another; "false" turns it off (as ff's
// environment variables and config files may say).
type optionalPrefix struct {
	p   *string
	def string
}

func (v optionalPrefix) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v optionalPrefix) Set(s string) error {
	switch s {
	case "true":
		*v.p = v.def
	case "false", "":
		*v.p = ""
	default:
		if strings.ContainsAny(s, "#+") || strings.HasPrefix(s, "/") || strings.HasSuffix(s, "/") {
			return fmt.Errorf("%q is not a topic prefix (no wildcards, no leading or trailing slash)", s)
		}
		*v.p = s
	}
	return nil
}

// IsBoolFlag lets the flag stand alone.
func (v optionalPrefix) IsBoolFlag() bool { return true }

// holdFlag is --hold: "adaptive" or a fixed hold. A duration keeps its
// old meaning, so an existing config's fixed hold stays fixed.
type holdFlag struct{ e *engine.Config }

func (f holdFlag) String() string {
	switch {
	case f.e == nil:
		return ""
	case f.e.Adaptive():
		return "adaptive"
	}
	return f.e.Hold.String()
}

func (f holdFlag) Set(v string) error {
	if v == "adaptive" {
		f.e.Hold = engine.AdaptiveHold
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf(`want "adaptive" or a duration such as 500ms: %w`, err)
	}
	f.e.Hold = d
	return nil
}

// engineFlags binds the engine's settings, named as serve names them.
func engineFlags(fs *flag.FlagSet, e *engine.Config) {
	fs.Var(holdFlag{e}, "hold", "reorder hold (allowed lateness): 'adaptive' (per device, within --hold-min and --hold-max) or a fixed duration; 0 evaluates in arrival order")
	fs.DurationVar(&e.HoldMin, "hold-min", e.HoldMin, "the adaptive hold's lower bound")
	fs.DurationVar(&e.HoldMax, "hold-max", e.HoldMax, "the adaptive hold's upper bound, held while a device is new or its clock just stepped (at most 16s)")
	fs.Float64Var(&e.MaxAccuracy, "max-accuracy", e.MaxAccuracy, "largest fix accuracy (metres) that widens fence edges; a worse fix counts at its position alone; 0: accuracy ignored")
	fs.Float64Var(&e.AccuracyMargin, "accuracy-margin", e.AccuracyMargin, "how many times its accuracy a fix must be across a fence's edge to change the device's state there")
	fs.Float64Var(&e.MaxSpeed, "speed-gate", e.MaxSpeed, "speed gate, m/s (road vehicles; aircraft need more): a fix implying a faster jump is set aside until the next agrees (0: off)")
	fs.DurationVar(&e.Skew, "skew-tolerance", e.Skew, "how far ahead of its device's learned clock a stamp may be")
	fs.DurationVar(&e.MaxClockOffset, "max-clock-offset", e.MaxClockOffset, "how far from the server's clock a device's clock may be (a new device is trusted within it)")
	fs.DurationVar(&e.History, "history", e.History, "how far back late pings are reconciled into each device's history (0: late pings go to the late topic)")
	fs.Var(flagvalue.Time{P: &e.MinValidTime}, "min-valid-time", "stamps before this are clamped (RFC 3339)")
	fs.DurationVar(&e.Sweep, "sweep", e.Sweep, "housekeeping period: idle eviction (a silent device's DWELL is a deadline of its own)")
	fs.DurationVar(&e.IdleTimeout, "idle-timeout", e.IdleTimeout, "silence after which a device's buffer memory is reclaimed")
	fs.IntVar(&e.BufferCap, "buffer-cap", e.BufferCap, "reorder buffer capacity per device")
	fs.IntVar(&e.Queue, "queue", e.Queue, "ingest queue capacity per shard")
	fs.IntVar(&e.Shards, "shards", e.Shards, "engine shards (owner goroutines)")
	fs.DurationVar(&e.Dwell, "dwell", e.Dwell, "default dwell time; a fence's 'dwell' property overrides; 0 disables")
}

// serveFlags binds every serve flag to cfg; ff fills them from the command
// line, EDGEFENCE_* environment variables and a config file, in that order
// of precedence. The groups are the headings of serve --help.
func serveFlags(cfg *broker.Config, cluster *clusterFlags, topics *ingest.TopicFlags, proc *processFlags) (*flag.FlagSet, *cmdhelp.Groups) {
	fs := flag.NewFlagSet("edgefence serve", flag.ContinueOnError)
	g := new(cmdhelp.Groups)
	g.Group(fs, "listeners", func() {
		fs.StringVar(&cfg.MQTTAddr, "mqtt-addr", cfg.MQTTAddr, "MQTT TCP listen address")
		fs.StringVar(&cfg.TLSAddr, "tls-addr", cfg.TLSAddr, "MQTTS listen address (with --tls-cert)")
		fs.StringVar(&cfg.WSAddr, "ws-addr", cfg.WSAddr, "MQTT over WebSocket listen address (empty: off)")
		fs.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "HTTP address of the live page (/), /metrics, /healthz and /readyz (empty: off); with --auth the page needs a dashboard or admin user, /metrics an admin")
		fs.Var(flagvalue.Uint[uint32]{P: &cfg.MaxPacketSize}, "max-packet-size", "largest MQTT packet accepted, bytes")
		fs.Int64Var(&cfg.MaxConnections, "max-connections", cfg.MaxConnections, "connected clients at most")
		fs.DurationVar(&cfg.ConnectTimeout, "connect-timeout", cfg.ConnectTimeout, "a connection must send CONNECT within this")
		fs.DurationVar(&cfg.MaxSessionExpiry, "max-session-expiry", cfg.MaxSessionExpiry, "a kept session, and its client id's claim, ends at most this long after its connection")
		fs.IntVar(&cfg.ClientReadBuffer, "client-read-buffer", cfg.ClientReadBuffer, "read buffer per MQTT connection, bytes")
		fs.IntVar(&cfg.ClientWriteBuffer, "client-write-buffer", cfg.ClientWriteBuffer, "outbound bytes per connection coalesced into one write")
		fs.Var(flagvalue.Int32{P: &cfg.ClientQueue}, "client-queue", "outbound messages queued per client; a subscriber further behind loses messages (counted in edgefence_shed_total{stage=\"subscriber\"}); 0: 8192 (a queue grows with what is queued: trackers pay nothing for it)")
		fs.Var(flagvalue.Uint[uint16]{P: &cfg.MaxInflight}, "max-inflight", "outbound QoS 1/2 messages awaiting acknowledgement per client")
		fs.DurationVar(&cfg.CloseTimeout, "close-timeout", cfg.CloseTimeout, "how long shutdown waits for MQTT clients to close")
	})
	g.Group(fs, "engine", func() {
		fs.Var(flagvalue.Off{P: &cfg.EngineOff}, "engine", "on, or off: a bare MQTT broker with the same listeners, access control and limits, and no evaluation (a baseline for load tests)")
		fs.StringVar(&cfg.Fences, "fences", cfg.Fences, "GeoJSON fence file (reloaded on SIGHUP, on change, or from edgefence/admin/fences)")
		fs.DurationVar(&cfg.FencesPoll, "fences-poll", cfg.FencesPoll, "check the fence file for changes this often (0: only on SIGHUP)")
		topics.Register(fs, "telemetry topic filter: FILTER or FILTER=auto|canonical|owntracks|chirpstack|ttn, a LoRaWAN format optionally with a field mapping (FILTER=chirpstack,lat=gps.lat,lon=gps.lng; docs/lorawan.md); '+' levels are the device id")
		engineFlags(fs, &cfg.Engine)
	})
	g.Group(fs, "security", func() {
		fs.StringVar(&cfg.Auth, "auth", cfg.Auth, "YAML user file (bcrypt/argon2id hashes, roles device, gateway, dashboard and admin); without it only loopback listeners are allowed")
		fs.BoolVar(&cfg.AllowAnonymous, "allow-anonymous", cfg.AllowAnonymous, "allow anonymous access on non-loopback listeners (a trusted network only)")
		fs.BoolVar(&cfg.StrictClientIDs, "strict-client-ids", cfg.StrictClientIDs, "with --auth: a device's client id is its username, or starts with username/; nobody else's")
		fs.StringVar(&cfg.TLSCert, "tls-cert", cfg.TLSCert, "PEM certificate: enables the MQTTS listener (and wss on --ws-addr)")
		fs.StringVar(&cfg.TLSKey, "tls-key", cfg.TLSKey, "PEM key of --tls-cert")
		fs.StringVar(&cfg.TLSClientCA, "tls-client-ca", cfg.TLSClientCA, "PEM CA bundle: verify client certificates; a certificate's CN is the username")
		fs.Float64Var(&cfg.PublishRate, "rate", cfg.PublishRate, "publishes per second per device id (other publishes: per user or client id; 0: unlimited); over it: 0x97")
		fs.IntVar(&cfg.PublishBurst, "burst", cfg.PublishBurst, "publish burst per device id (or user, or client id) above --rate")
		fs.IntVar(&cfg.MaxPayload, "max-payload", cfg.MaxPayload, "telemetry payload limit in bytes")
	})
	g.Group(fs, "cluster", func() {
		fs.Var(&flagvalue.Joined{P: &cluster.NATS}, "cluster", "NATS cluster client URLs, comma-separated: every accepted ping goes to the JetStream ping stream, its PUBACK sent once stored there; the nodes evaluate the partitions (--evaluate) and follow the cluster's retained state for their dashboards (empty: the local engine does; docs/scale-out.md)")
		fs.StringVar(&cluster.Name, "name", cluster.Name, "with --cluster: the node's name in the lease bucket, as edgefence worker's --name (and its NATS connection's): unique per running node and worker; default: the host name and the process id, host-pid")
		// The help names the default rather than print the PID of the
		// process printing it.
		fs.Lookup("name").DefValue = ""
		fs.IntVar(&cluster.Partitions, "partitions", cluster.Partitions, "with --cluster: device partitions P (every node's and worker's the same)")
		fs.IntVar(&cluster.Replicas, "replicas", cluster.Replicas, "with --cluster: replicas of the ping stream when serve creates it")
		fs.BoolVar(&cluster.Evaluate, "evaluate", cluster.Evaluate, "with --cluster: own a share of the partitions and evaluate them in this process, as edgefence worker does (false: only take pings and serve dashboards, with worker processes evaluating)")
		natsSecurityFlags(fs, &cluster.Security)
	})
	g.Group(fs, "output", func() {
		fs.StringVar(&cfg.TransitionPrefix, "transition-prefix", cfg.TransitionPrefix, "transitions go to PREFIX/<fence>/<device>, retained")
		fs.StringVar(&cfg.LateTopic, "late-topic", cfg.LateTopic, "late pings go to TOPIC/<device>")
		fs.StringVar(&cfg.RejectTopic, "reject-topic", cfg.RejectTopic, "rejected payloads go to TOPIC/<device>")
		fs.DurationVar(&cfg.ExitExpiry, "exit-expiry", cfg.ExitExpiry, "MQTT 5 message expiry of retained EXIT messages")
		fs.Var(optionalPrefix{&cfg.HomeAssistant, homeassistant.DefaultPrefix}, "homeassistant", "Home Assistant MQTT discovery: devices as device_trackers with an occupancy binary_sensor per fence, fences as occupancy sensors; =`PREFIX` for a discovery prefix other than homeassistant")
		fs.BoolVar(&cfg.OwnTracksEvents, "owntracks-events", cfg.OwnTracksEvents, "publish the transitions of devices reporting over owntracks/<user>/<device> as OwnTracks events on owntracks/<user>/<device>/event")
		fs.StringVar(&cfg.MapTiles, "map-tiles", cfg.MapTiles, "live page: base map, a tile URL template (https://tile.openstreetmap.org/{z}/{x}/{y}.png) or a directory of tiles DIR/{z}/{x}/{y}.png served offline (empty: no base map, no request leaves the page)")
		fs.StringVar(&cfg.MapAttribution, "map-attribution", cfg.MapAttribution, "live page: the tile provider's credit shown on the map, e.g. '© OpenStreetMap contributors'")
		fs.StringVar(&cfg.Capture, "capture", cfg.Capture, "append every accepted ping to this JSON Lines file, for edgefence replay (empty: off)")
		fs.Int64Var(&cfg.CaptureMaxBytes, "capture-max-bytes", cfg.CaptureMaxBytes, "rotate the capture file before it grows past this size")
		fs.IntVar(&cfg.CaptureKeep, "capture-keep", cfg.CaptureKeep, "rotated capture files kept (FILE.1 … FILE.N); 0 keeps none")
	})
	g.Group(fs, "ops", func() {
		fs.String("config", "", "config file: one 'flag value' per line (e.g. 'hold 750ms')")
		fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "directory of the retained-state store (empty: in memory, lost on restart)")
		fs.BoolVar(&cfg.Pprof, "pprof", cfg.Pprof, "serve /debug/pprof/ on the HTTP address (with --auth: admin users only)")
		proc.register(fs)
		cmdhelp.RegisterRemoved(fs, removedServeFlags()) // refused or reported, not listed
	})
	return fs, g
}

func serveCommand() *ffcli.Command {
	cfg := broker.DefaultConfig()
	topics := ingest.NewTopicFlags()
	proc := defaultProcessFlags()
	cluster := defaultClusterFlags()
	fs, groups := serveFlags(&cfg, &cluster, topics, &proc)
	return &ffcli.Command{
		Name:       "serve",
		ShortUsage: "edgefence serve [flags]",
		ShortHelp:  "run the edge broker",
		LongHelp: "Run the MQTT broker with the geofence engine. Every flag can also be set as an\n" +
			"EDGEFENCE_* environment variable (EDGEFENCE_HOLD=750ms; lists comma-separated)\n" +
			"or in the --config file.",
		FlagSet:   fs,
		Options:   configOptions(),
		UsageFunc: usageFunc(groups),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cmdhelp.NoArguments("edgefence serve", args)
			}
			var err error
			if cfg.Log, err = proc.setup(); err != nil {
				return err
			}
			if err := cmdhelp.CheckRemoved(fs, cfg.Log); err != nil {
				return err
			}
			if cfg.Telemetry, err = topics.Filters(); err != nil {
				return err
			}
			if cluster.NATS != "" {
				cfg.Cluster = &cluster.Options
			}
			return serve(ctx, cfg, cluster.Evaluate)
		},
	}
}

// serve runs the broker, and with --cluster and evaluate the node's
// share of the partitions beside it, until ctx is done.
func serve(ctx context.Context, cfg broker.Config, evaluate bool) error {
	if err := cfg.Engine.Validate(); err != nil {
		return err
	}
	if cfg.Cluster != nil {
		// The worker's own check, before any listener binds: a node with
		// a name the lease bucket cannot hold never takes a ping.
		w := workerConfig(cfg)
		if err := w.Validate(); err != nil {
			return err
		}
	}
	srv, err := broker.Start(cfg)
	if err != nil {
		return err
	}
	if cfg.Cluster == nil || !evaluate {
		return runUntilDone(ctx, cfg.Log, srv)
	}
	node, err := startClusterNode(cfg, srv)
	if err != nil {
		return err
	}
	return runUntilDone(ctx, cfg.Log, node)
}

// runner is what serve and bridge run until a signal stops them.
type runner interface {
	ReloadFences() error
	Close(context.Context) error
}

// runUntilDone runs r until ctx is done (SIGINT, SIGTERM), reloading the
// fences on SIGHUP, then shuts it down (which flushes the engine).
func runUntilDone(ctx context.Context, log *slog.Logger, r runner) error {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for ctx.Err() == nil {
		select {
		case <-hup:
			_ = r.ReloadFences() // logged and counted; the old fences stay live on error
		case <-ctx.Done():
		}
	}
	log.Info("shutting down: flushing reorder buffers and publishing their transitions")
	if err := r.Close(context.Background()); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// configOptions is how serve and bridge read their flags: command line,
// then EDGEFENCE_* environment variables (lists comma-separated), then the
// --config file of "flag value" lines.
func configOptions() []ff.Option {
	return []ff.Option{
		ff.WithEnvVarPrefix("EDGEFENCE"),
		ff.WithEnvVarSplit(","),
		ff.WithConfigFileFlag("config"),
		ff.WithConfigFileParser(ff.PlainParser),
	}
}
