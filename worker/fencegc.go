package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/subjects"
)

// Fence versions no partition can need again are deleted from the
// checkpoint store. A partition needs the version its checkpoint was
// taken under (a new owner starts under it) and every version a fence
// message after that checkpoint names (the replay switches to each in
// turn); one with no checkpoint replays its whole stream, and starts under
// the current version, which is needed too. A version stored less than
// fenceGrace ago is kept whatever it looks like: the reload that stored
// it may not have made it current or published its messages yet.
//
// Each worker collects after one of its partitions saved its first
// checkpoint under a new version: that is when an older one may have
// stopped being needed. Workers collecting at once delete the same
// objects, which is harmless.

// fenceGrace is how long a stored fence version is kept regardless: well
// over a reload's 30 s, and over the clock difference between a worker
// and the NATS servers that stamp the objects.
var fenceGrace = 5 * time.Minute

// Metadata of a checkpoint object: its fence version and the stream
// sequence it stands after, so that collecting reads no checkpoint.
const (
	metaFences = "edgefence-fences"
	metaSeq    = "edgefence-seq"
)

// DeleteUnusedFences deletes the fence versions no partition of a
// cluster of partitions partitions can need again (see above) and
// returns them, for operators and tests.
func DeleteUnusedFences(ctx context.Context, js jetstream.JetStream, partitions int) ([]string, error) {
	obs, err := js.ObjectStore(ctx, subjects.CheckpointBucket)
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	w := &Worker{js: js, ckpts: obs}
	w.cfg.Partitions = partitions
	return w.deleteUnusedFences(ctx)
}

// deleteUnusedFences is DeleteUnusedFences on the worker's connection.
func (w *Worker) deleteUnusedFences(ctx context.Context) ([]string, error) {
	// The listing first: a checkpoint saved after it only ever needs what
	// the older one and the messages after it (read later) need.
	objs, err := w.ckpts.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the checkpoint store: %w", err)
	}
	type ckInfo struct {
		ver string
		seq uint64
	}
	cks := map[int]ckInfo{}
	var candidates []string
	for _, o := range objs {
		switch ver, ok := strings.CutPrefix(o.Name, fenceObjectPrefix); {
		case o.Name == currentFences:
		case ok:
			if time.Since(o.ModTime) >= fenceGrace {
				candidates = append(candidates, ver)
			}
		default:
			n, isCk := subjects.CheckpointPartition(o.Name)
			if !isCk || n < 0 || n >= w.cfg.Partitions {
				continue
			}
			seq, err := strconv.ParseUint(o.Metadata[metaSeq], 10, 64)
			ver, has := o.Metadata[metaFences]
			if err != nil || !has {
				// Saved before checkpoints carried metadata: read it.
				ck, err := w.loadCheckpoint(ctx, n)
				if err != nil || ck == nil {
					return nil, fmt.Errorf("checkpoint of partition %d: %v", n, err)
				}
				ver, seq = ck.Fences, ck.Seq
			}
			cks[n] = ckInfo{ver, seq}
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	needed := map[string]bool{}
	cur, err := w.ckpts.GetBytes(ctx, currentFences)
	if err != nil {
		return nil, fmt.Errorf("read the current fence version: %w", err)
	}
	needed[string(cur)] = true
	pings, err := w.js.Stream(ctx, subjects.PingStream)
	if err != nil {
		return nil, fmt.Errorf("ping stream: %w", err)
	}
	for n := range w.cfg.Partitions {
		ck := cks[n] // none: the whole stream, from the current version
		needed[ck.ver] = true
		for seq := ck.seq + 1; ; {
			m, err := pings.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subjects.Fence(n)))
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("fence messages of partition %d: %w", n, err)
			}
			needed[string(m.Data)] = true
			seq = m.Sequence + 1
		}
	}
	var deleted []string
	for _, ver := range candidates {
		if needed[ver] {
			continue
		}
		// Stored again since the listing (a reload of the same file)?
		info, err := w.ckpts.GetInfo(ctx, fenceObjectPrefix+ver)
		if err != nil || time.Since(info.ModTime) < fenceGrace {
			continue
		}
		if err := w.ckpts.Delete(ctx, fenceObjectPrefix+ver); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return deleted, fmt.Errorf("delete fence set %s: %w", short(ver), err)
		}
		deleted = append(deleted, ver)
	}
	slices.Sort(deleted)
	return deleted, nil
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
		deleted, err := w.deleteUnusedFences(c)
		cancel()
		if len(deleted) > 0 {
			w.fmu.Lock()
			for _, ver := range deleted {
				delete(w.fv.sets, ver)
			}
			w.fmu.Unlock()
			short12 := make([]string, len(deleted))
			for i, v := range deleted {
				short12[i] = short(v)
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
