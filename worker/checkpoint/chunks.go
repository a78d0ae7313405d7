package checkpoint

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/subjects"
)

// The checkpoint stream holds named values of any size (a partition's
// checkpoint, a fence set) as chunks and a head. A put publishes the
// value's chunks under a write id of its own, then the head naming them,
// conditional on the head it read (expected last subject sequence), and
// only then purges the chunks of the head it replaced: a put that fails
// or dies at any point leaves the previous value readable, and a head is
// never stored over chunks that were purged. Every subject keeps its last
// message only (MaxMsgsPerSubject 1), and purging by subject leaves no
// marker behind. Gets go to the stream leader (no direct gets), so a head
// and its chunks are read from one, current, copy.
//
//	edgefence.ckpt.h.<name>               the head (JSON: write id, chunks, size, SHA-256, metadata)
//	edgefence.ckpt.c.<name>.<id>.<i>      chunk i of write id

const (
	headToken  = "h."
	chunkToken = "c."
	// maxChunk is the largest chunk; smaller when the servers' max
	// payload is.
	maxChunk = 128 << 10
	// putTries is how many times a put whose head lost a race with
	// another put of the same name writes again.
	putTries = 3
	// orphanAge is how old chunks no head names must be before a put
	// purges them: they are a put's that died or whose head's fate is
	// unknown, and no put takes this long.
	orphanAge = 10 * time.Minute
)

// errNotFound is a name with no value.
var errNotFound = errors.New("not found")

// head is what a value's head message holds.
type head struct {
	ID      string            `json:"id"`
	Chunks  int               `json:"chunks"`
	Size    int               `json:"size"`
	SHA256  string            `json:"sha256"`
	Meta    map[string]string `json:"meta,omitempty"`
	Deleted bool              `json:"deleted,omitempty"`
}

// entry is a name's head as stored: rev is its stream sequence (0: no
// head), stamped when the server stored it.
type entry struct {
	head
	Name    string
	Rev     uint64
	Stamped time.Time
}

// chunked is the chunked store on the checkpoint stream.
type chunked struct {
	js    jetstream.JetStream
	s     jetstream.Stream
	chunk int

	mu    sync.Mutex // guards swept
	swept map[string]bool
}

func newChunked(js jetstream.JetStream, s jetstream.Stream) *chunked {
	chunk := maxChunk
	if nc := js.Conn(); nc != nil && nc.MaxPayload() > 0 {
		// Room for the subject and headers within the max payload.
		chunk = int(min(int64(chunk), max(nc.MaxPayload()/2, 1024)))
	}
	return &chunked{js: js, s: s, chunk: chunk, swept: map[string]bool{}}
}

func headSubject(name string) string { return subjects.CheckpointPrefix + headToken + name }

func chunkSubject(name, id string, i int) string {
	return chunksOf(name) + id + "." + strconv.Itoa(i)
}

// chunksOf is the subject prefix of name's chunks.
func chunksOf(name string) string { return subjects.CheckpointPrefix + chunkToken + name + "." }

// newID returns a write id: its start in Unix ms, so that orphans can be
// aged, and randomness, so that two puts never share one.
func newID() string {
	var r [6]byte
	_, _ = rand.Read(r[:]) // never fails (crypto/rand)
	return strconv.FormatInt(time.Now().UnixMilli(), 10) + "-" + hex.EncodeToString(r[:])
}

// info returns name's head; a deleted or missing one has Rev set (the
// sequence a put must expect) and errNotFound.
func (c *chunked) info(ctx context.Context, name string) (entry, error) {
	m, err := cluster.LastMsg(ctx, c.s, headSubject(name))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return entry{Name: name}, errNotFound
	}
	if err != nil {
		return entry{Name: name}, fmt.Errorf("head of %s: %w", name, err)
	}
	e := entry{Name: name, Rev: m.Sequence, Stamped: m.Time}
	if err := json.Unmarshal(m.Data, &e.head); err != nil {
		return e, fmt.Errorf("head of %s: %w", name, err)
	}
	if e.Deleted {
		return e, errNotFound
	}
	return e, nil
}

// get returns name's value and head, or errNotFound.
func (c *chunked) get(ctx context.Context, name string) ([]byte, entry, error) {
	for try := 0; ; try++ {
		e, err := c.info(ctx, name)
		if err != nil {
			return nil, e, err
		}
		data, err := c.read(ctx, e)
		if !errors.Is(err, jetstream.ErrMsgNotFound) {
			return data, e, err
		}
		// A put replaced the head since and purged these chunks?
		if now, herr := c.info(ctx, name); herr != nil || now.Rev == e.Rev || try == putTries {
			return nil, e, fmt.Errorf("%s: a chunk its head names is missing: %w", name, err)
		}
	}
}

// read returns the value e names, checked against its size and hash.
func (c *chunked) read(ctx context.Context, e entry) ([]byte, error) {
	data := make([]byte, 0, e.Size)
	for i := range e.Chunks {
		m, err := cluster.LastMsg(ctx, c.s, chunkSubject(e.Name, e.ID, i))
		if err != nil {
			return nil, fmt.Errorf("chunk %d of %s: %w", i, e.Name, err)
		}
		data = append(data, m.Data...)
	}
	sum := sha256.Sum256(data)
	if len(data) != e.Size || hex.EncodeToString(sum[:]) != e.SHA256 {
		return nil, fmt.Errorf("%s: %d bytes read do not match its head (%d bytes, SHA-256 %s)", e.Name, len(data), e.Size, e.SHA256)
	}
	return data, nil
}

// put stores data as name's value, with metadata meta.
func (c *chunked) put(ctx context.Context, name string, data []byte, meta map[string]string) error {
	for try := 1; ; try++ {
		prev, err := c.info(ctx, name)
		if err != nil && !errors.Is(err, errNotFound) {
			return err
		}
		err = c.create(ctx, name, data, meta, prev.Rev)
		if err == nil {
			if prev.ID != "" {
				c.purgeChunks(ctx, name, prev.ID)
			}
			c.sweepOnce(ctx, name)
			return nil
		}
		if !errors.Is(err, errLostRace) || try == putTries {
			return err
		}
	}
}

// create stores data as name's value, with metadata meta, if its head is
// still at sequence rev (0: none); errLostRace if it is not.
func (c *chunked) create(ctx context.Context, name string, data []byte, meta map[string]string, rev uint64) error {
	sum := sha256.Sum256(data)
	h := head{ID: newID(), Chunks: (len(data) + c.chunk - 1) / c.chunk, Size: len(data), SHA256: hex.EncodeToString(sum[:]), Meta: meta}
	return c.write(ctx, name, h, data, rev)
}

// errLostRace is a head refused because another put of its name stored
// one first; its chunks are purged.
var errLostRace = errors.New("another put of the same name came first")

// write publishes data's chunks under h.ID and then h, expecting the head
// at sequence rev (0: none).
func (c *chunked) write(ctx context.Context, name string, h head, data []byte, rev uint64) error {
	for i := range h.Chunks {
		part := data[i*c.chunk : min(len(data), (i+1)*c.chunk)]
		if _, err := c.js.Publish(ctx, chunkSubject(name, h.ID, i), part); err != nil {
			// No head names these chunks: drop the ones stored.
			c.purgeChunks(ctx, name, h.ID)
			return fmt.Errorf("store chunk %d of %d of %s: %w", i+1, h.Chunks, name, err)
		}
	}
	body, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("head of %s: %w", name, err)
	}
	_, err = c.js.Publish(ctx, headSubject(name), body, jetstream.WithExpectLastSequencePerSubject(rev))
	if err == nil {
		return nil
	}
	if isWrongLastSeq(err) {
		c.purgeChunks(ctx, name, h.ID)
		return fmt.Errorf("store head of %s: %w", name, errLostRace)
	}
	// Unknown whether the head was stored. Its chunks may go only when
	// it cannot be: another head is stored after the one it expects.
	if now, ierr := c.info(ctx, name); ierr == nil || errors.Is(ierr, errNotFound) {
		switch {
		case now.ID == h.ID:
			return nil
		case now.Rev != rev:
			c.purgeChunks(ctx, name, h.ID)
		}
	}
	return fmt.Errorf("store head of %s: %w", name, err)
}

// isWrongLastSeq reports whether err is a refused expected last subject
// sequence (10164 on replicated streams).
func isWrongLastSeq(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && (api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
		api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// purgeChunks purges write id's chunks of name, which no head names any
// more (or ever did). A failure leaves orphans, purged by a later sweep.
func (c *chunked) purgeChunks(ctx context.Context, name, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = c.s.Purge(ctx, jetstream.WithPurgeSubject(chunksOf(name)+id+".>"))
}

// sweepOnce purges name's orphaned chunks on this store's first put of
// name: they are left by puts that died part-way, and rare.
func (c *chunked) sweepOnce(ctx context.Context, name string) {
	c.mu.Lock()
	done := c.swept[name]
	c.swept[name] = true
	c.mu.Unlock()
	if !done {
		c.sweep(ctx, name)
	}
}

// sweep purges the chunks of name that its head does not name and that a
// put began more than orphanAge ago.
func (c *chunked) sweep(ctx context.Context, name string) {
	cur, err := c.info(ctx, name)
	if err != nil && !errors.Is(err, errNotFound) {
		return
	}
	si, err := c.s.Info(ctx, jetstream.WithSubjectFilter(chunksOf(name)+">"))
	if err != nil {
		return
	}
	ids := map[string]bool{}
	for subj := range si.State.Subjects {
		if id, _, ok := strings.Cut(strings.TrimPrefix(subj, chunksOf(name)), "."); ok {
			ids[id] = true
		}
	}
	for id := range ids {
		ms, err := strconv.ParseInt(id[:max(0, strings.IndexByte(id, '-'))], 10, 64)
		if id != cur.ID && err == nil && time.Since(time.UnixMilli(ms)) > orphanAge {
			c.purgeChunks(ctx, name, id)
		}
	}
}

// list returns the heads of the names beginning with prefix.
func (c *chunked) list(ctx context.Context, prefix string) ([]entry, error) {
	si, err := c.s.Info(ctx, jetstream.WithSubjectFilter(headSubject("*")))
	if err != nil {
		return nil, fmt.Errorf("list the checkpoint stream: %w", err)
	}
	var out []entry
	for subj := range si.State.Subjects {
		name := strings.TrimPrefix(subj, subjects.CheckpointPrefix+headToken)
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		e, err := c.info(ctx, name)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// remove deletes name's value if its head is still e: a deleted head in
// its place (conditional, so a put since wins), then its chunks, then the
// deleted head itself unless a put came after it.
func (c *chunked) remove(ctx context.Context, e entry) error {
	body, err := json.Marshal(head{Deleted: true})
	if err != nil {
		return err
	}
	ack, err := c.js.Publish(ctx, headSubject(e.Name), body, jetstream.WithExpectLastSequencePerSubject(e.Rev))
	if isWrongLastSeq(err) {
		return errLostRace
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", e.Name, err)
	}
	c.purgeChunks(ctx, e.Name, e.ID)
	// Up to the deleted head, inclusive: a head stored after it stays.
	_ = c.s.Purge(ctx, jetstream.WithPurgeSubject(headSubject(e.Name)), jetstream.WithPurgeSequence(ack.Sequence+1))
	return nil
}
