package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/flagvalue"
	"github.com/edgefence/edgefence/worker"
)

// workerFlags binds every worker flag to cfg; ff fills them from the
// command line, EDGEFENCE_* environment variables and a config file.
func workerFlags(cfg *worker.Config, topics *flagvalue.Strings, proc *processFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("edgefence worker", flag.ContinueOnError)
	fs.String("config", "", "config file: one 'flag value' per line (e.g. 'hold 750ms')")
	fs.StringVar(&cfg.NATS, "nats", cfg.NATS, "NATS cluster client URLs, comma-separated")
	fs.StringVar(&cfg.MQTT, "nats-mqtt", cfg.MQTT, "MQTT listeners of the NATS nodes (host:port, comma-separated): transitions are published and retained there")
	fs.StringVar(&cfg.Name, "name", cfg.Name, "worker name in the lease bucket: unique per running worker")
	fs.IntVar(&cfg.Partitions, "partitions", cfg.Partitions, "device partitions P: the NATS subject mapping's partition(P, ...)")
	fs.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "replicas of the streams, lease bucket and checkpoints it creates")
	fs.DurationVar(&cfg.Lease, "lease", cfg.Lease, "partition lease: a dead worker's partitions move after it")
	fs.DurationVar(&cfg.CheckpointEvery, "checkpoint-every", cfg.CheckpointEvery, "how often an owned partition's engine state is saved")
	fs.DurationVar(&cfg.DedupWindow, "dedup-window", cfg.DedupWindow, "duplicate window of the transition history stream")
	fs.DurationVar(&cfg.PingsMaxAge, "pings-max-age", cfg.PingsMaxAge, "how long the ping stream keeps pings")
	fs.StringVar(&cfg.HTTPAddr, "http-addr", cfg.HTTPAddr, "HTTP address for /metrics, /healthz, /readyz (empty: off)")
	fs.BoolVar(&cfg.Pprof, "pprof", cfg.Pprof, "serve /debug/pprof/ on the HTTP address")
	fs.StringVar(&cfg.Fences, "fences", cfg.Fences, "GeoJSON fence file (read at start)")
	fs.Var(topics, "telemetry-topic", "telemetry topic filter, repeatable: FILTER or FILTER=auto|canonical|owntracks; '+' levels are the device id")
	fs.StringVar(&cfg.TransitionPrefix, "transition-prefix", cfg.TransitionPrefix, "transitions go to PREFIX/<fence>/<device>, retained")
	fs.StringVar(&cfg.LateTopic, "late-topic", cfg.LateTopic, "late pings go to TOPIC/<device>")
	fs.StringVar(&cfg.RejectTopic, "reject-topic", cfg.RejectTopic, "rejected payloads go to TOPIC/<device>")
	fs.IntVar(&cfg.MaxPayload, "max-payload", cfg.MaxPayload, "telemetry payload limit in bytes")
	engineFlags(fs, &cfg.Engine)
	proc.register(fs)
	return fs
}

func workerCommand() *ffcli.Command {
	cfg := worker.DefaultConfig()
	topics := &flagvalue.Strings{Values: ingest.DefaultTelemetryFilters}
	proc := defaultProcessFlags()
	fs := workerFlags(&cfg, topics, &proc)
	return &ffcli.Command{
		Name:       "worker",
		ShortUsage: "edgefence worker --nats nats://host:4222 --nats-mqtt host:1883 [flags]",
		ShortHelp:  "run the engine on a share of the device partitions of a NATS JetStream cluster",
		LongHelp: "Scale out: trackers publish to any NATS node (MQTT or NATS), the servers map\n" +
			"each device to one of P partitions of a replicated JetStream stream, and each\n" +
			"worker owns a share of the partitions by lease, runs the engine on them in\n" +
			"order, checkpoints it, and publishes transitions retained on the NATS nodes'\n" +
			"MQTT side and to a history stream. See docs/scale-out.md.",
		FlagSet: fs,
		Options: configOptions(),
		Exec: func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("worker takes no arguments, got %q", args)
			}
			var err error
			if cfg.Log, err = proc.setup(); err != nil {
				return err
			}
			if cfg.Telemetry, err = ingest.ParseTelemetryFilters(topics.Values); err != nil {
				return err
			}
			w, err := worker.Start(cfg)
			if err != nil {
				return err
			}
			cfg.Log.Info("worker started", "name", cfg.Name, "nats", cfg.NATS, "partitions", cfg.Partitions)
			return runUntilDone(ctx, cfg.Log, w)
		},
	}
}
