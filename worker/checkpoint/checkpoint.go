// Package checkpoint is the workers' checkpoint store, a JetStream stream
// of chunked values (chunks.go): each partition's saved state, and the
// fence sets those states were taken under, versioned by content, with
// the versions no partition can need again deleted (docs/scale-out.md).
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
// did before the type moved here: stored checkpoints stay byte for byte
// the same, the object store's included (legacy.go).
type checkpoint State

// Metadata of a stored checkpoint: its fence version and the stream
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
	st      *chunked
	legacy  jetstream.ObjectStore // the store before, if there is one (legacy.go)
	mu      sync.Mutex            // guards sets
	sets    map[string]*fence.Set
	current string // the cluster's newest fence version, as seen by Init
}

// New returns the store on the checkpoint stream s of the cluster of js
// (made by worker/cluster), reading what the object store of the
// workers before holds once, if there is one.
func New(ctx context.Context, js jetstream.JetStream, s jetstream.Stream) (*Store, error) {
	// A stream made by hand may lack what the chunked store relies on.
	if c := s.CachedInfo().Config; c.MaxMsgsPerSubject != 1 || c.AllowDirect {
		return nil, fmt.Errorf("checkpoint stream %s: needs max messages per subject 1 and no direct gets (has %d, %v)",
			c.Name, c.MaxMsgsPerSubject, c.AllowDirect)
	}
	st := &Store{js: js, st: newChunked(js, s), sets: map[string]*fence.Set{}}
	var err error
	if st.legacy, err = openLegacy(ctx, js); err != nil {
		return nil, err
	}
	return st, nil
}

// StreamConfig is the configuration of the checkpoint stream, with
// replicas replicas, that New's stream must have: one message a subject
// (a value's head or one of its chunks), gets from the leader (no
// AllowDirect: a head and its chunks read from one current copy), and a
// full stream refusing new messages rather than dropping stored ones.
func StreamConfig(replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name: subjects.CheckpointStream, Subjects: []string{subjects.CheckpointPrefix + ">"}, Replicas: replicas,
		Storage: jetstream.FileStorage, MaxMsgsPerSubject: 1, Discard: jetstream.DiscardNew,
	}
}

// Open returns the cluster's store, which a worker made.
func Open(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	s, err := js.Stream(ctx, subjects.CheckpointStream)
	if err != nil {
		return nil, fmt.Errorf("checkpoint stream: %w", err)
	}
	return New(ctx, js, s)
}

// Encode returns st as Put stores it.
func Encode(st *State) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode((*checkpoint)(st)); err != nil {
		return nil, fmt.Errorf("encode checkpoint: %w", err)
	}
	return buf.Bytes(), nil
}

// Put stores data, st encoded, as partition n's checkpoint. A put that
// fails leaves the checkpoint before it in place.
func (s *Store) Put(ctx context.Context, n int, st *State, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := s.st.put(ctx, subjects.CheckpointName(n), data, checkpointMeta(st)); err != nil {
		return fmt.Errorf("store checkpoint of partition %d: %w", n, err)
	}
	return nil
}

func checkpointMeta(st *State) map[string]string {
	return map[string]string{metaFences: st.Fences, metaSeq: strconv.FormatUint(st.Seq, 10)}
}

// Load returns partition n's checkpoint, or nil if it has none.
func (s *Store) Load(ctx context.Context, n int) (*State, error) {
	data, err := s.Saved(ctx, n)
	if err != nil || data == nil {
		return nil, err
	}
	st, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("partition %d: %w", n, err)
	}
	return st, nil
}

// Decode returns the checkpoint data holds, as Encode wrote it.
func Decode(data []byte) (*State, error) {
	var ck checkpoint
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&ck); err != nil {
		return nil, fmt.Errorf("decode checkpoint: %w", err)
	}
	if ck.Snap == nil {
		ck.Snap = &snapshot.State{}
	}
	return (*State)(&ck), nil
}

// Saved returns partition n's checkpoint as stored (encoded), or nil if
// it has none: a backup, for operators and tests.
func (s *Store) Saved(ctx context.Context, n int) ([]byte, error) {
	data, err := s.get(ctx, subjects.CheckpointName(n), func(data []byte) (map[string]string, error) {
		st, err := Decode(data)
		if err != nil {
			return nil, err
		}
		return checkpointMeta(st), nil
	})
	if errors.Is(err, errNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load checkpoint of partition %d: %w", n, err)
	}
	return data, nil
}

// Restore stores data, a checkpoint as Saved returns it, as partition n's
// checkpoint: restoring a backup, for operators and tests.
func (s *Store) Restore(ctx context.Context, n int, data []byte) error {
	st, err := Decode(data)
	if err != nil {
		return fmt.Errorf("partition %d: %w", n, err)
	}
	return s.Put(ctx, n, st, data)
}

// Seq returns the ping stream sequence partition n's saved state stands
// after (0: none saved), for operators and tests.
func Seq(ctx context.Context, js jetstream.JetStream, n int) (uint64, error) {
	s, err := Open(ctx, js)
	if err != nil {
		return 0, err
	}
	ck, err := s.Load(ctx, n)
	if err != nil || ck == nil {
		return 0, err
	}
	return ck.Seq, nil
}
