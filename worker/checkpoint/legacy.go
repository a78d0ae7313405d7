package checkpoint

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/subjects"
)

// Workers before the checkpoint stream kept checkpoints and fence sets in
// the object store edgefence-checkpoints, under the same names. A name
// the stream does not have is read there, and copied into the stream
// unless a value was stored meanwhile: each is migrated by its first
// read, and new workers never write the object store (docs/scale-out.md,
// "Upgrading from the object store").

// openLegacy returns the object store of the workers before, or nil if
// the cluster has none.
func openLegacy(ctx context.Context, js jetstream.JetStream) (jetstream.ObjectStore, error) {
	obs, err := js.ObjectStore(ctx, subjects.CheckpointBucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("object store %s (checkpoints before the stream): %w", subjects.CheckpointBucket, err)
	}
	return obs, nil
}

// get returns name's value from the stream, or from the object store
// before it (migrating it, with the metadata metaOf returns for it, if
// not nil), or errNotFound.
func (s *Store) get(ctx context.Context, name string, metaOf func([]byte) (map[string]string, error)) ([]byte, error) {
	data, e, err := s.st.get(ctx, name)
	if !errors.Is(err, errNotFound) || s.legacy == nil {
		return data, err
	}
	data, err = s.legacy.GetBytes(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%s in the object store %s: %w", name, subjects.CheckpointBucket, err)
	}
	var meta map[string]string
	if metaOf != nil {
		if meta, err = metaOf(data); err != nil {
			return nil, fmt.Errorf("%s in the object store %s: %w", name, subjects.CheckpointBucket, err)
		}
	}
	// Only where the stream still has nothing (e.Rev): a value stored
	// since is newer. A failure reads the object store again next time.
	_ = s.st.create(ctx, name, data, meta, e.Rev)
	return data, nil
}
