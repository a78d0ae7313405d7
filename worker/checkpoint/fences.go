package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/worker/subjects"
)

// Fence sets are versioned by content: a version is the SHA-256 of the
// GeoJSON, stored as fences-<version> in the checkpoint store.
// A reload puts the new set there and a fence message carrying its
// version into every partition's stream; each partition switches when it
// applies that message, at the same point of its stream whoever owns it
// and however often it is replayed, and its checkpoints name the version
// they were taken under. The value fences-current names the newest
// version, for partitions that start with no checkpoint. Versions no
// partition can need again are deleted (fencegc.go).

const (
	fenceObjectPrefix = "fences-"
	currentFences     = "fences-current"
)

// Version is the version of a GeoJSON fence set.
func Version(geojson []byte) string {
	sum := sha256.Sum256(geojson)
	return hex.EncodeToString(sum[:])
}

// Short is a version as logs name it.
func Short(ver string) string { return ver[:min(12, len(ver))] }

// Init stores a worker's fence file, parsed as set, as a version and
// returns it with the cluster's current one; the first worker of a
// cluster makes its file current.
func (s *Store) Init(ctx context.Context, geojson []byte, set *fence.Set) (ver, current string, err error) {
	ver = Version(geojson)
	s.sets[ver] = set
	if err := s.putFences(ctx, ver, geojson); err != nil {
		return "", "", err
	}
	cur, err := s.get(ctx, currentFences, nil)
	if errors.Is(err, errNotFound) {
		// The first worker of the cluster: its file, unless another
		// worker starting with it came first.
		if err = s.st.create(ctx, currentFences, []byte(ver), nil, 0); err == nil {
			cur = []byte(ver)
		} else if errors.Is(err, errLostRace) {
			cur, err = s.get(ctx, currentFences, nil)
		}
	}
	if err != nil {
		return "", "", fmt.Errorf("the current fence version: %w", err)
	}
	s.current = string(cur)
	return ver, s.current, nil
}

// putFences puts a fence set in the checkpoint store under its version.
// It puts it again when it is there: the new modification time keeps it
// from being collected (fencegc.go) while the reload goes on.
func (s *Store) putFences(ctx context.Context, ver string, geojson []byte) error {
	if err := s.st.put(ctx, fenceObjectPrefix+ver, geojson, nil); err != nil {
		return fmt.Errorf("store fence set %s: %w", Short(ver), err)
	}
	return nil
}

// FenceSet returns the fence set of version ver, from the cache or the
// checkpoint store.
func (s *Store) FenceSet(ctx context.Context, ver string) (*fence.Set, error) {
	s.mu.Lock()
	set := s.sets[ver]
	s.mu.Unlock()
	if set != nil {
		return set, nil
	}
	data, err := s.get(ctx, fenceObjectPrefix+ver, nil)
	if err != nil {
		return nil, fmt.Errorf("fence set %s: %w", Short(ver), err)
	}
	if set, err = fence.Parse(data); err != nil {
		return nil, fmt.Errorf("fence set %s: %w", Short(ver), err)
	}
	s.mu.Lock()
	s.sets[ver] = set
	s.mu.Unlock()
	return set, nil
}

// StartFences returns the version a partition starts under: its
// checkpoint's (ck, nil if none), else the cluster's current one.
func (s *Store) StartFences(ctx context.Context, ck *State) (string, *fence.Set, error) {
	ver := s.current
	if ck != nil && ck.Fences != "" {
		ver = ck.Fences
	} else if cur, err := s.get(ctx, currentFences, nil); err == nil {
		ver = string(cur)
	}
	set, err := s.FenceSet(ctx, ver)
	return ver, set, err
}

// Publish publishes a fence set, geojson parsed as set, to every
// partition: stored under its version, made current, and a fence message
// into each partition's stream, which its owner applies in order. It
// returns the version.
func (s *Store) Publish(ctx context.Context, geojson []byte, set *fence.Set, partitions int) (string, error) {
	ver := Version(geojson)
	if err := s.putFences(ctx, ver, geojson); err != nil {
		return "", err
	}
	s.mu.Lock()
	s.sets[ver] = set
	s.mu.Unlock()
	if err := s.st.put(ctx, currentFences, []byte(ver), nil); err != nil {
		return "", fmt.Errorf("store the current fence version: %w", err)
	}
	// Every partition, owned or not, here or elsewhere: its next owner
	// applies the message when it reaches it. A repeat (a retried reload)
	// is a no-op.
	for n := range partitions {
		if _, err := s.js.Publish(ctx, subjects.Fence(n), []byte(ver)); err != nil {
			return "", fmt.Errorf("publish fence set %s to partition %d (the partitions before it have it: reload again): %w", Short(ver), n, err)
		}
	}
	// A collector that judged the version unused just before this reload
	// stored it may have deleted it since: store it again.
	if _, err := s.st.info(ctx, fenceObjectPrefix+ver); errors.Is(err, errNotFound) {
		if err := s.putFences(ctx, ver, geojson); err != nil {
			return "", err
		}
	}
	return ver, nil
}

// FenceVersions returns the fence versions stored, sorted, for operators
// and tests.
func (s *Store) FenceVersions(ctx context.Context) ([]string, error) {
	es, err := s.st.list(ctx, fenceObjectPrefix)
	if err != nil {
		return nil, err
	}
	var vs []string
	for _, e := range es {
		if e.Name != currentFences {
			vs = append(vs, strings.TrimPrefix(e.Name, fenceObjectPrefix))
		}
	}
	slices.Sort(vs)
	return vs, nil
}
