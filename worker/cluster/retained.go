package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/subjects"
)

// RetainedBucket returns the retained bucket, creating it with replicas
// when it is missing: the workers and serve --cluster, whichever starts
// first, make the same. One value per key: a follower wants the current
// state, and a new value supersedes the one before.
func RetainedBucket(ctx context.Context, js jetstream.JetStream, replicas int) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, subjects.RetainedBucket)
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return kv, err
	}
	kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      subjects.RetainedBucket,
		Description: "edgefence: the current value of every retained output",
		History:     1, Replicas: replicas, Storage: jetstream.FileStorage,
	})
	if errors.Is(err, jetstream.ErrBucketExists) {
		return js.KeyValue(ctx, subjects.RetainedBucket)
	}
	return kv, err
}

// PutRetained makes body the current value of topic's retained output
// in the retained bucket; an empty body deletes it, as an empty retained
// publish does in MQTT. Writing the same value again changes nothing a
// follower keeps.
func PutRetained(ctx context.Context, kv jetstream.KeyValue, topic string, body []byte) error {
	key := subjects.RetainedKey(topic)
	var err error
	if len(body) == 0 {
		err = kv.Delete(ctx, key)
	} else {
		_, err = kv.Put(ctx, key, body)
	}
	if err != nil {
		return fmt.Errorf("retained bucket %s: %w", topic, err)
	}
	return nil
}

// HoldsRetained reports whether the retained bucket holds body as
// topic's current value (for an empty body: holds none).
func HoldsRetained(ctx context.Context, kv jetstream.KeyValue, topic string, body []byte) (bool, error) {
	e, err := kv.Get(ctx, subjects.RetainedKey(topic))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return len(body) == 0, nil
	}
	if err != nil {
		return false, err
	}
	return string(e.Value()) == string(body), nil
}
