package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/pingstream"
	"github.com/edgefence/edgefence/worker"
)

// clusterFlags are serve --cluster's settings: the ingest's, and whether
// the node also owns partitions and evaluates them, the work of an
// edgefence worker, in its own process.
type clusterFlags struct {
	pingstream.Options
	Evaluate bool
}

// defaultClusterFlags are serve --cluster's defaults: the workers', and
// every node evaluating.
func defaultClusterFlags() clusterFlags {
	w := worker.DefaultConfig()
	return clusterFlags{
		Options:  pingstream.Options{Name: w.Name, Partitions: w.Partitions, Replicas: w.Replicas, PingsMaxAge: w.PingsMaxAge},
		Evaluate: true,
	}
}

// workerConfig is the in-process worker of a serve --cluster node: the
// node's cluster, engine, fences, topics and output, no HTTP endpoint of
// its own (its metrics are on the node's /metrics) and no NATS MQTT side
// (the node's dashboards follow the retained bucket). Its metrics are
// the started broker's (startClusterNode).
func workerConfig(cfg broker.Config) worker.Config {
	c := cfg.Cluster
	w := worker.DefaultConfig()
	w.NATS, w.Security, w.Name = c.NATS, c.Security, c.Name
	w.Partitions, w.Replicas, w.PingsMaxAge = c.Partitions, c.Replicas, c.PingsMaxAge
	w.MQTT, w.HTTPAddr = "", ""
	w.Engine, w.Fences, w.Telemetry, w.MaxPayload = cfg.Engine, cfg.Fences, cfg.Telemetry, cfg.MaxPayload
	w.TransitionPrefix, w.LateTopic, w.RejectTopic = cfg.TransitionPrefix, cfg.LateTopic, cfg.RejectTopic
	w.Log = cfg.Log.With("component", "worker")
	return w
}

// clusterNode is a serve --cluster node that evaluates: the broker and
// its in-process worker, run and stopped together.
type clusterNode struct {
	srv *broker.Server
	w   *worker.Worker
}

// startClusterNode starts the worker beside a started broker; on failure
// the broker is closed too.
func startClusterNode(cfg broker.Config, srv *broker.Server) (*clusterNode, error) {
	wc := workerConfig(cfg)
	wc.Metrics, wc.EngineMetrics = srv.Metrics(), srv.Engine().Metrics()
	w, err := worker.Start(wc)
	if err != nil {
		_ = srv.Close(context.Background())
		return nil, fmt.Errorf("start the node's partitions (--evaluate): %w", err)
	}
	return &clusterNode{srv: srv, w: w}, nil
}

// ReloadFences reloads the broker's fence file and publishes it to every
// partition of the cluster (as SIGHUP to edgefence worker does).
func (n *clusterNode) ReloadFences() error {
	return errors.Join(n.srv.ReloadFences(), n.w.ReloadFences())
}

// Close hands the node's partitions over first, so that the next owners
// take them while the broker still stores the pings of its trackers,
// then closes the broker.
func (n *clusterNode) Close(ctx context.Context) error {
	return errors.Join(n.w.Close(ctx), n.srv.Close(ctx))
}
