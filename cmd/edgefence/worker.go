package main

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/cmdhelp"
	"github.com/edgefence/edgefence/internal/flagvalue"
	"github.com/edgefence/edgefence/worker"
	"github.com/edgefence/edgefence/worker/security"
	"github.com/edgefence/edgefence/worker/subjects"
)

// workerFlags binds every worker flag to cfg; ff fills them from the
// command line, EDGEFENCE_* environment variables and a config file.
// The groups are the headings of worker --help.
func workerFlags(cfg *worker.Config, topics *ingest.TopicFlags, proc *processFlags, printMappings *bool) (*flag.FlagSet, *cmdhelp.Groups) {
	fs := flag.NewFlagSet("edgefence worker", flag.ContinueOnError)
	g := new(cmdhelp.Groups)
	g.Group(fs, "cluster", func() {
		fs.Var(&flagvalue.Joined{P: &cfg.NATS}, "nats", "NATS cluster client URLs, comma-separated")
		fs.Var(&flagvalue.Joined{P: &cfg.MQTT}, "nats-mqtt", "MQTT listeners of the NATS nodes (host:port, comma-separated; tcp:// or tls:// to say which, else TLS with --nats-ca/--nats-cert): transitions are published and retained there too (empty: no NATS MQTT side; dashboards connect to serve --cluster nodes, which follow the retained bucket)")
		fs.StringVar(&cfg.Name, "name", cfg.Name, "worker name in the lease bucket: unique per running worker; default: the host name and the process id, host-pid")
		// The help names the default rather than print the PID of the
		// process printing it.
		fs.Lookup("name").DefValue = ""
		fs.IntVar(&cfg.Partitions, "partitions", cfg.Partitions, "device partitions P: the NATS subject mapping's partition(P, ...)")
		fs.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "replicas of the streams, lease bucket and checkpoints it creates")
		fs.DurationVar(&cfg.Lease, "lease", cfg.Lease, "partition lease: a dead worker's partitions move after it")
		fs.DurationVar(&cfg.CheckpointEvery, "checkpoint-every", cfg.CheckpointEvery, "how often an owned partition's engine state is saved")
		fs.DurationVar(&cfg.DedupWindow, "dedup-window", cfg.DedupWindow, "duplicate window of the transition history stream")
		fs.DurationVar(&cfg.PingsMaxAge, "pings-max-age", cfg.PingsMaxAge, "how long the ping stream keeps pings")
		fs.BoolVar(printMappings, "print-nats-mappings", false, "print the NATS servers' subject mappings for --telemetry-topic and --partitions, and exit")
	})
	g.Group(fs, "security", func() { natsSecurityFlags(fs, &cfg.Security) })
	g.Group(fs, "engine", func() {
		fs.StringVar(&cfg.Fences, "fences", cfg.Fences, "GeoJSON fence file: the cluster's first fence set; SIGHUP publishes it to every partition")
		topics.Register(fs, "telemetry topic filter: FILTER or FILTER=auto|canonical|owntracks|chirpstack|ttn[,mapping]; '+' levels are the device id (a LoRaWAN uplink names its own); the NATS servers must map each (--print-nats-mappings)")
		fs.IntVar(&cfg.MaxPayload, "max-payload", cfg.MaxPayload, "telemetry payload limit in bytes")
		engineFlags(fs, &cfg.Engine)
	})
	g.Group(fs, "output", func() {
		fs.StringVar(&cfg.TransitionPrefix, "transition-prefix", cfg.TransitionPrefix, "transitions go to PREFIX/<fence>/<device>, retained")
		fs.StringVar(&cfg.LateTopic, "late-topic", cfg.LateTopic, "late pings go to TOPIC/<device>")
		fs.StringVar(&cfg.RejectTopic, "reject-topic", cfg.RejectTopic, "rejected payloads go to TOPIC/<device>")
	})
	g.Group(fs, "ops", func() {
		fs.String("config", "", "config file: one 'flag value' per line (e.g. 'hold 750ms')")
		fs.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "HTTP address for /metrics, /healthz, /readyz (empty: off)")
		fs.BoolVar(&cfg.Pprof, "pprof", cfg.Pprof, "serve /debug/pprof/ on the HTTP address")
		proc.register(fs)
	})
	return fs, g
}

// natsMappings is the mappings block of a NATS server's configuration
// for filters and p partitions.
func natsMappings(filters []ingest.TelemetryFilter, p int) string {
	m := subjects.Mappings(filters, p)
	var b strings.Builder
	b.WriteString("mappings = {\n")
	for _, from := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "  %q: %q\n", from, m[from])
	}
	b.WriteString("}\n")
	return b.String()
}

func workerCommand() *ffcli.Command {
	cfg := worker.DefaultConfig()
	topics := ingest.NewTopicFlags()
	proc := defaultProcessFlags()
	var printMappings bool
	fs, groups := workerFlags(&cfg, topics, &proc, &printMappings)
	return &ffcli.Command{
		Name:       "worker",
		ShortUsage: "edgefence worker --nats nats://host:4222 [flags]",
		ShortHelp:  "run the engine on a share of the device partitions of a NATS JetStream cluster",
		LongHelp: "Scale out: trackers publish to any NATS node (MQTT or NATS), the servers map\n" +
			"each device to one of P partitions of a replicated JetStream stream, and each\n" +
			"worker owns a share of the partitions by lease, runs the engine on them in\n" +
			"order, checkpoints it, and publishes transitions to a history stream and the\n" +
			"retained state to a KV bucket that every serve --cluster node follows for its\n" +
			"dashboards. See docs/scale-out.md.",
		FlagSet:   fs,
		Options:   configOptions(),
		UsageFunc: usageFunc(groups),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return cmdhelp.NoArguments("edgefence worker", args)
			}
			var err error
			if cfg.Log, err = proc.setup(); err != nil {
				return err
			}
			if cfg.Telemetry, err = topics.Filters(); err != nil {
				return err
			}
			if printMappings {
				fmt.Print(natsMappings(cfg.Telemetry, cfg.Partitions))
				return nil
			}
			w, err := worker.Start(cfg)
			if err != nil {
				return err
			}
			cfg.Log.Info("worker started", "name", cfg.Name, "nats", security.RedactURLs(cfg.NATS), "partitions", cfg.Partitions)
			return runUntilDone(ctx, cfg.Log, w)
		},
	}
}

// natsSecurityFlags binds the NATS credential and TLS flags, the same
// for worker and serve --cluster.
func natsSecurityFlags(fs *flag.FlagSet, s *security.Settings) {
	fs.StringVar(&s.Creds, "nats-creds", s.Creds, "NATS .creds file (user JWT and seed); a worker's MQTT login sends its JWT as the password (a bearer-token user)")
	fs.StringVar(&s.User, "nats-user", s.User, "NATS user name (a worker's MQTT login too)")
	fs.Var(&flagvalue.Joined{P: &s.Password}, "nats-password", "password of --nats-user (better: EDGEFENCE_NATS_PASSWORD)")
	fs.StringVar(&s.CA, "nats-ca", s.CA, "PEM file of the CAs that sign the servers' certificates: TLS to NATS (and a worker's MQTT)")
	fs.StringVar(&s.Cert, "nats-cert", s.Cert, "PEM client certificate, for servers that verify clients (with --nats-key): TLS to NATS (and a worker's MQTT)")
	fs.StringVar(&s.Key, "nats-key", s.Key, "PEM key of --nats-cert")
}
