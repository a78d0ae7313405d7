package worker

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/worker/checkpoint"
)

// The fence sets are versioned by content in the checkpoint store, and a
// reload reaches the partitions as a fence message in each one's stream
// (package checkpoint). Fences change by reload only, so that a worker
// restarted with an old file cannot roll the cluster back.

// fenceGrace is how long a stored fence version is kept regardless
// (checkpoint.FenceGrace); tests shorten it.
var fenceGrace = checkpoint.FenceGrace

// initFences stores the worker's fence file as a version and learns the
// cluster's current one; the first worker of a cluster makes its file
// current. A file that differs from the cluster's is not applied.
func (w *Worker) initFences(ctx context.Context, geojson []byte) error {
	ver, cur, err := w.store.Init(ctx, geojson, w.fences)
	if err != nil {
		return err
	}
	if cur != ver {
		w.log.Warn("the fences file differs from the cluster's fence set, which the partitions keep: reload (SIGHUP) to publish the file",
			"file", w.cfg.Fences, "file_version", checkpoint.Short(ver), "cluster_version", checkpoint.Short(cur))
	}
	return nil
}

// ReloadFences reads the fences file again and publishes it to every
// partition: stored under its version, made current, and a fence message
// into each partition's stream, which its owner applies in order. One
// worker's reload serves the cluster; an invalid file changes nothing.
func (w *Worker) ReloadFences() error {
	err := w.reloadFences()
	if err != nil {
		w.m.reloadsFailed.Inc()
		w.log.Error("fence reload failed: the partitions keep their fences", "source", w.cfg.Fences, "error", err)
		return err
	}
	w.m.reloadsOK.Inc()
	return nil
}

func (w *Worker) reloadFences() error {
	data, err := os.ReadFile(w.cfg.Fences)
	if err != nil {
		return fmt.Errorf("reload fences: %w", err)
	}
	s, err := fence.Parse(data)
	if err != nil {
		return fmt.Errorf("fences from %s: %w", w.cfg.Fences, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ver, err := w.store.Publish(ctx, data, s, w.cfg.Partitions)
	if err != nil {
		return err
	}
	w.log.Info("fences published to every partition", "source", w.cfg.Fences, "version", checkpoint.Short(ver), "fences", s.Len(), "partitions", w.cfg.Partitions)
	return nil
}

// fenceGCLoop deletes unused fence versions each time it is kicked,
// until ctx is done; kicks while it runs make one more run.
func (w *Worker) fenceGCLoop(ctx context.Context) {
	defer close(w.gcDone)
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.gcKick:
		}
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		deleted, err := w.store.DeleteUnusedFences(c, w.cfg.Partitions, fenceGrace)
		cancel()
		if len(deleted) > 0 {
			short12 := make([]string, len(deleted))
			for i, v := range deleted {
				short12[i] = checkpoint.Short(v)
			}
			w.m.fencesDeleted.Add(len(deleted))
			w.log.Info("unused fence versions deleted", "versions", short12)
		}
		if err != nil && ctx.Err() == nil {
			w.log.Warn("deleting unused fence versions failed: they stay until the next switch", "error", err)
		}
	}
}

// kickFenceGC asks the worker's collector to run.
func (w *Worker) kickFenceGC() {
	select {
	case w.gcKick <- struct{}{}:
	default: // one is pending already
	}
}
