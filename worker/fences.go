package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/worker/subjects"
)

// Fence sets are versioned by content: a version is the SHA-256 of the
// GeoJSON, stored as the object fences-<version> in the checkpoint store.
// A reload puts the new set there and a fence message carrying its
// version into every partition's stream; each partition switches when it
// applies that message, at the same point of its stream whoever owns it
// and however often it is replayed, and its checkpoints name the version
// they were taken under. The object fences-current names the newest
// version, for partitions that start with no checkpoint. Versions no
// partition can need again are deleted (fencegc.go).

const (
	fenceObjectPrefix = "fences-"
	currentFences     = "fences-current"
)

// fenceVersion is the version of a GeoJSON fence set.
func fenceVersion(geojson []byte) string {
	sum := sha256.Sum256(geojson)
	return hex.EncodeToString(sum[:])
}

// fenceState is the worker's view of the fence versions: its cache of
// parsed sets (one per version, shared by its partitions, read-only).
type fenceState struct {
	file    string // the version of the --fences file read at start
	current string // the cluster's newest version, as last seen
	sets    map[string]*fence.Set
}

// initFences stores the worker's fence file as a version and learns the
// cluster's current one; the first worker of a cluster makes its file
// current. A file that differs from the cluster's is not applied: fences
// change by reload (SIGHUP), so that a worker restarted with an old file
// cannot roll the cluster back.
func (w *Worker) initFences(ctx context.Context, geojson []byte) error {
	ver := fenceVersion(geojson)
	w.fv.file = ver
	w.fv.sets = map[string]*fence.Set{ver: w.fences}
	if err := w.storeFences(ctx, ver, geojson); err != nil {
		return err
	}
	cur, err := w.ckpts.GetBytes(ctx, currentFences)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		if _, err := w.ckpts.PutBytes(ctx, currentFences, []byte(ver)); err != nil {
			return fmt.Errorf("store the current fence version: %w", err)
		}
		w.fv.current = ver
	case err != nil:
		return fmt.Errorf("read the current fence version: %w", err)
	default:
		w.fv.current = string(cur)
		if w.fv.current != ver {
			w.log.Warn("the fences file differs from the cluster's fence set, which the partitions keep: reload (SIGHUP) to publish the file",
				"file", w.cfg.Fences, "file_version", short(ver), "cluster_version", short(w.fv.current))
		}
	}
	return nil
}

func short(ver string) string { return ver[:min(12, len(ver))] }

// storeFences puts a fence set in the checkpoint store under its version.
// It puts it again when it is there: the new modification time keeps it
// from being collected (fencegc.go) while the reload goes on.
func (w *Worker) storeFences(ctx context.Context, ver string, geojson []byte) error {
	if _, err := w.ckpts.PutBytes(ctx, fenceObjectPrefix+ver, geojson); err != nil {
		return fmt.Errorf("store fence set %s: %w", short(ver), err)
	}
	return nil
}

// fenceSet returns the fence set of version ver, from the cache or the
// checkpoint store.
func (w *Worker) fenceSet(ctx context.Context, ver string) (*fence.Set, error) {
	w.fmu.Lock()
	s := w.fv.sets[ver]
	w.fmu.Unlock()
	if s != nil {
		return s, nil
	}
	data, err := w.ckpts.GetBytes(ctx, fenceObjectPrefix+ver)
	if err != nil {
		return nil, fmt.Errorf("fence set %s: %w", short(ver), err)
	}
	if s, err = fence.Parse(data); err != nil {
		return nil, fmt.Errorf("fence set %s: %w", short(ver), err)
	}
	w.fmu.Lock()
	w.fv.sets[ver] = s
	w.fmu.Unlock()
	return s, nil
}

// startFences returns the version a partition starts under: its
// checkpoint's, else the cluster's current one.
func (w *Worker) startFences(ctx context.Context, ck *checkpoint) (string, *fence.Set, error) {
	ver := w.fv.current
	if ck != nil && ck.Fences != "" {
		ver = ck.Fences
	} else if cur, err := w.ckpts.GetBytes(ctx, currentFences); err == nil {
		ver = string(cur)
	}
	s, err := w.fenceSet(ctx, ver)
	return ver, s, err
}

// switchFences applies a fence message: the partition's engine, advanced
// to the message's instant under the old set, takes the new one, and
// devices inside a removed fence get their EXIT now, as on serve.
func (pt *partition) switchFences(ctx context.Context, ver string, now time.Time) error {
	if ver == pt.fenceVer {
		return nil
	}
	s, err := pt.w.fenceSet(ctx, ver)
	if err != nil {
		return err
	}
	pt.fences, pt.fenceVer = s, ver
	pt.proc.Reconcile(now)
	pt.w.log.Info("fences switched", "partition", pt.n, "version", short(ver), "fences", s.Len())
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
	ver := fenceVersion(data)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.storeFences(ctx, ver, data); err != nil {
		return err
	}
	w.fmu.Lock()
	w.fv.sets[ver] = s
	w.fmu.Unlock()
	if _, err := w.ckpts.PutBytes(ctx, currentFences, []byte(ver)); err != nil {
		return fmt.Errorf("store the current fence version: %w", err)
	}
	// Every partition, owned or not, here or elsewhere: its next owner
	// applies the message when it reaches it. A repeat (a retried reload)
	// is a no-op.
	for n := range w.cfg.Partitions {
		if _, err := w.js.Publish(ctx, subjects.Fence(n), []byte(ver)); err != nil {
			return fmt.Errorf("publish fence set %s to partition %d (the partitions before it have it: reload again): %w", short(ver), n, err)
		}
	}
	// A collector that judged the version unused just before this reload
	// stored it may have deleted it since: store it again.
	if _, err := w.ckpts.GetInfo(ctx, fenceObjectPrefix+ver); errors.Is(err, jetstream.ErrObjectNotFound) {
		if err := w.storeFences(ctx, ver, data); err != nil {
			return err
		}
	}
	w.log.Info("fences published to every partition", "source", w.cfg.Fences, "version", short(ver), "fences", s.Len(), "partitions", w.cfg.Partitions)
	return nil
}
