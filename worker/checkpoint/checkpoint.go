// Package checkpoint is the workers' checkpoint store, a JetStream object
// store: each partition's saved state, and the fence sets those states
// were taken under, versioned by content, with the versions no partition
// can need again deleted (docs/scale-out.md).
package checkpoint

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/snapshot"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/worker/subjects"
)

// State is a partition's saved state: the engine's devices after the
// ping stream's message Seq, and the partition clock then.
type State struct {
	Seq   uint64
	Clock int64 // Unix ns
	// Sent is the id of the last output sent over MQTT: if it is the
	// newest history record, nothing was left half-published.
	Sent string
	Snap *snapshot.State

	// HistSeq is the partition's newest history record when saved: the
	// records after it are the replay's.
	HistSeq uint64
	// Fences is the fence version the state was taken under.
	Fences string
	// Frames are the partition reader's LoRaWAN frame windows, so that
	// the next owner drops a copy of a frame this one took (none in a
	// checkpoint saved before they were kept: its reader starts empty).
	Frames []ingest.FrameWindow
}

// checkpoint is State as gob names it in every stored checkpoint, as it
// did before the type moved here: the objects stay byte for byte the same.
type checkpoint State

// Metadata of a checkpoint object: its fence version and the stream
// sequence it stands after, so that collecting reads no checkpoint.
const (
	metaFences = "edgefence-fences"
	metaSeq    = "edgefence-seq"
)

// Store is the checkpoint store of a cluster, and a worker's cache of the
// fence sets in it (one parsed set per version, shared by its partitions,
// read-only).
type Store struct {
	js      jetstream.JetStream
	obs     jetstream.ObjectStore
	mu      sync.Mutex // guards sets
	sets    map[string]*fence.Set
	current string // the cluster's newest fence version, as seen by Init
}

// New returns the store of the object store obs, on the cluster of js.
func New(js jetstream.JetStream, obs jetstream.ObjectStore) *Store {
	return &Store{js: js, obs: obs, sets: map[string]*fence.Set{}}
}

// open returns the cluster's store, which a worker made.
func open(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	obs, err := js.ObjectStore(ctx, subjects.CheckpointBucket)
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	return New(js, obs), nil
}

// Encode returns st as Put stores it.
func Encode(st *State) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode((*checkpoint)(st)); err != nil {
		return nil, fmt.Errorf("encode checkpoint: %w", err)
	}
	return buf.Bytes(), nil
}

// Put stores data, st encoded, as partition n's checkpoint.
func (s *Store) Put(ctx context.Context, n int, st *State, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	meta := jetstream.ObjectMeta{Name: subjects.CheckpointName(n), Metadata: map[string]string{
		metaFences: st.Fences, metaSeq: strconv.FormatUint(st.Seq, 10)}}
	if _, err := s.obs.Put(ctx, meta, bytes.NewReader(data)); err != nil {
		return fmt.Errorf("store checkpoint of partition %d: %w", n, err)
	}
	return nil
}

// Load returns partition n's checkpoint, or nil if it has none.
func (s *Store) Load(ctx context.Context, n int) (*State, error) {
	data, err := s.obs.GetBytes(ctx, subjects.CheckpointName(n))
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load checkpoint of partition %d: %w", n, err)
	}
	var ck checkpoint
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&ck); err != nil {
		return nil, fmt.Errorf("decode checkpoint of partition %d: %w", n, err)
	}
	if ck.Snap == nil {
		ck.Snap = &snapshot.State{}
	}
	return (*State)(&ck), nil
}

// Seq returns the ping stream sequence partition n's saved state stands
// after (0: none saved), for operators and tests.
func Seq(ctx context.Context, js jetstream.JetStream, n int) (uint64, error) {
	s, err := open(ctx, js)
	if err != nil {
		return 0, err
	}
	ck, err := s.Load(ctx, n)
	if err != nil || ck == nil {
		return 0, err
	}
	return ck.Seq, nil
}
