package checkpoint

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
// the current version, which is needed too. A version stored less than a
// grace period (FenceGrace) ago is kept whatever it looks like: the
// reload that stored it may not have made it current or published its
// messages yet.
//
// Each worker collects after one of its partitions saved its first
// checkpoint under a new version: that is when an older one may have
// stopped being needed. Workers collecting at once delete the same
// objects, which is harmless.

// FenceGrace is how long a stored fence version is kept regardless: well
// over a reload's 30 s, and over the clock difference between a worker
// and the NATS servers that stamp the objects.
const FenceGrace = 5 * time.Minute

// DeleteUnusedFences deletes the fence versions no partition of a
// cluster of partitions partitions can need again (see above) and
// returns them, for operators and tests.
func DeleteUnusedFences(ctx context.Context, js jetstream.JetStream, partitions int) ([]string, error) {
	s, err := Open(ctx, js)
	if err != nil {
		return nil, err
	}
	return s.DeleteUnusedFences(ctx, partitions, FenceGrace)
}

// DeleteUnusedFences is the package's DeleteUnusedFences with a grace
// period of grace, on the store's connection; the versions it deletes
// leave the cache too.
func (s *Store) DeleteUnusedFences(ctx context.Context, partitions int, grace time.Duration) ([]string, error) {
	deleted, err := s.deleteUnusedFences(ctx, partitions, grace)
	s.mu.Lock()
	for _, ver := range deleted {
		delete(s.sets, ver)
	}
	s.mu.Unlock()
	return deleted, err
}

func (s *Store) deleteUnusedFences(ctx context.Context, partitions int, grace time.Duration) ([]string, error) {
	// The listing first: a checkpoint saved after it only ever needs what
	// the older one and the messages after it (read later) need.
	objs, err := s.st.list(ctx, "")
	if err != nil {
		return nil, err
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
			if time.Since(o.Stamped) >= grace {
				candidates = append(candidates, ver)
			}
		default:
			n, isCk := subjects.CheckpointPartition(o.Name)
			if !isCk || n < 0 || n >= partitions {
				continue
			}
			seq, err := strconv.ParseUint(o.Meta[metaSeq], 10, 64)
			ver, has := o.Meta[metaFences]
			if err != nil || !has {
				// Every put gives a checkpoint its metadata; should it be
				// unreadable, the checkpoint says.
				ck, err := s.Load(ctx, n)
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
	cur, err := s.get(ctx, currentFences, nil)
	if err != nil {
		return nil, fmt.Errorf("read the current fence version: %w", err)
	}
	needed[string(cur)] = true
	pings, err := s.js.Stream(ctx, subjects.PingStream)
	if err != nil {
		return nil, fmt.Errorf("ping stream: %w", err)
	}
	for n := range partitions {
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
		info, err := s.st.info(ctx, fenceObjectPrefix+ver)
		if err != nil || time.Since(info.Stamped) < grace {
			continue
		}
		// Only that value: one stored since the reading is kept.
		switch err := s.st.remove(ctx, info); {
		case errors.Is(err, errLostRace):
			continue
		case err != nil:
			return deleted, fmt.Errorf("delete fence set %s: %w", Short(ver), err)
		}
		deleted = append(deleted, ver)
	}
	slices.Sort(deleted)
	return deleted, nil
}
