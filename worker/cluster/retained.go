package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/subjects"
)

// RetainedHistory is how many values per key the retained bucket keeps.
// A follower wants the current one, but one whose watcher is replaced
// after a leader change resumes after the last revision it received:
// the values a key had meanwhile are still there to deliver, in order,
// unless it had more than this many.
const RetainedHistory = 8

// RetainedBucket returns the retained bucket, creating it with replicas
// when it is missing: the workers and serve --cluster, whichever starts
// first, make the same.
func RetainedBucket(ctx context.Context, js jetstream.JetStream, replicas int) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, subjects.RetainedBucket)
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return kv, err
	}
	kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      subjects.RetainedBucket,
		Description: "edgefence: the current value of every retained output",
		History:     RetainedHistory, Replicas: replicas, Storage: jetstream.FileStorage,
	})
	if errors.Is(err, jetstream.ErrBucketExists) {
		return js.KeyValue(ctx, subjects.RetainedBucket)
	}
	return kv, err
}

// PutRetained makes body the current value of topic's retained output
// in the retained bucket; an empty body deletes it, as an empty retained
// publish does in MQTT. A value is put as kv.Put puts it, a publish on
// its key's subject, with id (the output's) as its message id: a put
// sent again because its acknowledgement was lost is stored once, and a
// follower delivers it once (within the bucket's duplicate window).
func PutRetained(ctx context.Context, js jetstream.JetStream, kv jetstream.KeyValue, topic string, body []byte, id string) error {
	var err error
	if len(body) == 0 {
		err = kv.Delete(ctx, subjects.RetainedKey(topic))
	} else {
		m := &nats.Msg{Subject: subjects.RetainedSubject(topic), Data: body, Header: nats.Header{}}
		if id != "" {
			m.Header.Set(jetstream.MsgIDHeader, id)
		}
		_, err = js.PublishMsg(ctx, m)
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
