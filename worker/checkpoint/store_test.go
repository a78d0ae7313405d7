package checkpoint_test

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/snapshot"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/worker/checkpoint"
	"github.com/edgefence/edgefence/worker/subjects"
)

// startNATS starts a JetStream server on a free loopback port, with a
// max payload of maxPayload bytes (0: the default), and returns its URL.
func startNATS(t *testing.T, maxPayload int32) string {
	t.Helper()
	opts := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		MaxPayload: maxPayload, NoLog: true, NoSigs: true}
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(20 * time.Second) {
		t.Fatal("nats: not ready")
	}
	return s.ClientURL()
}

// dial connects to url and returns the connection and its JetStream.
func dial(t *testing.T, url string) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return nc, js
}

// openStore creates the checkpoint stream as a worker does and returns
// its store.
func openStore(ctx context.Context, t *testing.T, js jetstream.JetStream) *checkpoint.Store {
	t.Helper()
	s, err := js.CreateOrUpdateStream(ctx, checkpoint.StreamConfig(1))
	if err != nil {
		t.Fatal(err)
	}
	st, err := checkpoint.New(ctx, js, s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// bigState is a checkpoint of n LoRaWAN frame windows, 60-odd bytes
// each encoded.
func bigState(seq uint64, n int) *checkpoint.State {
	st := &checkpoint.State{Seq: seq, Clock: 42, Sent: "out-7", HistSeq: 3, Fences: "v1",
		Snap: &snapshot.State{Cursor: 5}}
	for i := range n {
		st.Frames = append(st.Frames, ingest.FrameWindow{Device: fmt.Sprintf("a84041000181%04x-%d-%d", i, seq, i*7), Top: uint32(i), Seen: uint64(i) << 3, Gen: int64(i)})
	}
	return st
}

func put(ctx context.Context, t *testing.T, s *checkpoint.Store, n int, st *checkpoint.State) []byte {
	t.Helper()
	data, err := checkpoint.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, n, st, data); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestCheckpointLargerThanMaxPayload: a checkpoint several times the
// servers' max payload is stored in chunks and loads as it was saved;
// a second one replaces it and its chunks.
func TestCheckpointLargerThanMaxPayload(t *testing.T) {
	const maxPayload = 32 << 10
	_, js := dial(t, startNATS(t, maxPayload))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := openStore(ctx, t, js)

	for _, seq := range []uint64{10, 20} {
		want := bigState(seq, 5000)
		data := put(ctx, t, s, 3, want)
		if len(data) < 4*maxPayload {
			t.Fatalf("a checkpoint of %d bytes does not test chunking past a max payload of %d", len(data), maxPayload)
		}
		got, err := s.Load(ctx, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("checkpoint %d loaded differs from the one saved", seq)
		}
	}
	// The first checkpoint's chunks are gone: the stream holds about one.
	info, err := js.Stream(ctx, subjects.CheckpointStream)
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.Saved(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if b := info.CachedInfo().State.Bytes; b > uint64(len(data))*3/2 {
		t.Errorf("the stream holds %d bytes for one checkpoint of %d", b, len(data))
	}
	if seq, err := checkpoint.Seq(ctx, js, 3); err != nil || seq != 20 {
		t.Errorf("Seq = %d, %v; want 20", seq, err)
	}
}

// TestInterruptedCheckpointKeepsPrevious: a worker whose connection
// closes while it stores a checkpoint's chunks leaves the checkpoint
// before it in place, and another worker loads that one and then saves
// its own.
func TestInterruptedCheckpointKeepsPrevious(t *testing.T) {
	url := startNATS(t, 16<<10)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nc, js := dial(t, url)
	s := openStore(ctx, t, js)
	prev := bigState(10, 12000)
	put(ctx, t, s, 0, prev)

	// Close the writer's connection when the server has a third chunk of
	// the next checkpoint (of 60 or so: the writer waits for each chunk's
	// ack, so it is far from its head when the close comes).
	watch, _ := dial(t, url)
	var seen atomic.Int32
	sub, err := watch.Subscribe(subjects.CheckpointPrefix+"c.p-0.>", func(*nats.Msg) {
		if seen.Add(1) == 3 {
			nc.Close()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	next := bigState(20, 12000)
	data, err := checkpoint.Encode(next)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 50*(8<<10) {
		t.Fatalf("a checkpoint of %d bytes has too few chunks to be cut", len(data))
	}
	if err := s.Put(ctx, 0, next, data); err == nil {
		t.Fatal("the put succeeded on a connection closed after its third chunk")
	}
	if seen.Load() < 3 {
		t.Fatalf("the put failed after %d chunks, before the connection was closed", seen.Load())
	}

	_, js2 := dial(t, url)
	s2 := openStore(ctx, t, js2)
	got, err := s2.Load(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, prev) {
		t.Fatalf("after an interrupted put the checkpoint is at %d, want the previous one at %d", got.Seq, prev.Seq)
	}
	put(ctx, t, s2, 0, next)
	if got, err := s2.Load(ctx, 0); err != nil || !reflect.DeepEqual(got, next) {
		t.Fatalf("the next put: %v", err)
	}
}

// TestRefusedChunkKeepsPrevious: a checkpoint the stream has no room
// for (a chunk refused past MaxBytes) fails and leaves the previous one
// loadable. nats.go's object store stored the new meta over chunks it
// then purged, so the checkpoint could never be read again.
func TestRefusedChunkKeepsPrevious(t *testing.T) {
	_, js := dial(t, startNATS(t, 16<<10))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := openStore(ctx, t, js)
	prev := bigState(10, 1500)
	put(ctx, t, s, 0, prev)

	stream, err := js.Stream(ctx, subjects.CheckpointStream)
	if err != nil {
		t.Fatal(err)
	}
	cfg := checkpoint.StreamConfig(1)
	cfg.MaxBytes = int64(stream.CachedInfo().State.Bytes) + 20<<10 // two chunks, not a checkpoint
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	next := bigState(20, 1500)
	data, err := checkpoint.Encode(next)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 40<<10 {
		t.Fatalf("a checkpoint of %d bytes fits the room left", len(data))
	}
	if err := s.Put(ctx, 0, next, data); err == nil {
		t.Fatal("a checkpoint larger than the room left was stored")
	}
	if got, err := s.Load(ctx, 0); err != nil || !reflect.DeepEqual(got, prev) {
		t.Fatalf("after a refused put the checkpoint loads as %v (%v), want the previous one", got, err)
	}
	// Its chunks were dropped: with the limit lifted it is stored.
	cfg.MaxBytes = 0
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	put(ctx, t, s, 0, next)
	if got, err := s.Load(ctx, 0); err != nil || !reflect.DeepEqual(got, next) {
		t.Fatalf("after the limit was lifted: %v", err)
	}
}

// TestConcurrentPutsLeaveOneReadable: workers saving the same partition
// at once (an old owner's late checkpoint) leave one of their
// checkpoints, whole, never a mix or a head over purged chunks.
func TestConcurrentPutsLeaveOneReadable(t *testing.T) {
	url := startNATS(t, 16<<10)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stores []*checkpoint.Store
	for range 3 {
		_, js := dial(t, url)
		stores = append(stores, openStore(ctx, t, js))
	}
	for round := range 5 {
		errs := make(chan error, len(stores))
		for i, s := range stores {
			go func() {
				st := bigState(uint64(100*round+i), 300)
				data, err := checkpoint.Encode(st)
				if err == nil {
					err = s.Put(ctx, 1, st, data)
				}
				errs <- err
			}()
		}
		for range stores {
			if err := <-errs; err != nil && !strings.Contains(err.Error(), "another put") {
				t.Fatal(err)
			}
		}
		got, err := stores[0].Load(ctx, 1)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if i := got.Seq - uint64(100*round); got.Seq < uint64(100*round) || i >= 3 || !reflect.DeepEqual(got, bigState(got.Seq, 300)) {
			t.Fatalf("round %d: loaded checkpoint %d", round, got.Seq)
		}
	}
}

// TestObjectStoreCheckpointsMigrate: a cluster whose workers kept
// checkpoints and fence sets in the object store edgefence-checkpoints
// (before the checkpoint stream) keeps them: a new worker's store reads
// each there once and copies it into the stream.
func TestObjectStoreCheckpointsMigrate(t *testing.T) {
	_, js := dial(t, startNATS(t, 0))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: subjects.CheckpointBucket})
	if err != nil {
		t.Fatal(err)
	}
	geojson := []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"id":"c"},"geometry":{"type":"Polygon","coordinates":[[[13.40,52.49],[13.42,52.49],[13.42,52.51],[13.40,52.51],[13.40,52.49]]]}}]}`)
	ver := checkpoint.Version(geojson)
	old := bigState(77, 10)
	old.Fences = ver
	// As the workers before stored it (Encode's format is unchanged).
	data, err := checkpoint.Encode(old)
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string][]byte{"p-2": data, "fences-current": []byte(ver), "fences-" + ver: geojson} {
		if _, err := obs.PutBytes(ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}

	s := openStore(ctx, t, js)
	mine := []byte(`{"type":"FeatureCollection","features":[]}`)
	set, err := fence.Parse(mine)
	if err != nil {
		t.Fatal(err)
	}
	if _, cur, err := s.Init(ctx, mine, set); err != nil || cur != ver {
		t.Fatalf("Init: the cluster's current version %s (%v), want the object store's %s", checkpoint.Short(cur), err, checkpoint.Short(ver))
	}
	got, err := s.Load(ctx, 2)
	if err != nil || !reflect.DeepEqual(got, old) {
		t.Fatalf("Load: %+v, %v; want the object store's checkpoint", got, err)
	}
	if gotVer, fs, err := s.StartFences(ctx, got); err != nil || gotVer != ver || fs.Len() != 1 {
		t.Fatalf("StartFences: %s, %v", checkpoint.Short(gotVer), err)
	}
	if ck, err := s.Load(ctx, 5); err != nil || ck != nil {
		t.Fatalf("a partition with no checkpoint anywhere: %v, %v", ck, err)
	}

	// Once read, the stream has them: the object store can go.
	if err := js.DeleteObjectStore(ctx, subjects.CheckpointBucket); err != nil {
		t.Fatal(err)
	}
	s2 := openStore(ctx, t, js)
	if _, cur, err := s2.Init(ctx, mine, set); err != nil || cur != ver {
		t.Fatalf("after the object store went: current %s, %v", checkpoint.Short(cur), err)
	}
	if got, err := s2.Load(ctx, 2); err != nil || !reflect.DeepEqual(got, old) {
		t.Fatalf("after the object store went: %+v, %v", got, err)
	}
	if _, _, err := s2.StartFences(ctx, old); err != nil {
		t.Fatalf("after the object store went: %v", err)
	}
	if _, err := s2.FenceSet(ctx, checkpoint.Version(mine)); err != nil {
		t.Fatalf("a worker's own file: %v", err)
	}
}

// TestOrphanedChunksPurged: chunks no head names (a put that died
// part-way) are purged by the next store's first put of that name once
// they are old, and kept while they may be a put's under way.
func TestOrphanedChunksPurged(t *testing.T) {
	_, js := dial(t, startNATS(t, 0))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := openStore(ctx, t, js)
	put(ctx, t, s, 4, bigState(1, 10))
	old := subjects.CheckpointPrefix + "c.p-4." + strconv.FormatInt(time.Now().Add(-time.Hour).UnixMilli(), 10) + "-0a0b0c0d0e0f.0"
	young := subjects.CheckpointPrefix + "c.p-4." + strconv.FormatInt(time.Now().UnixMilli(), 10) + "-0a0b0c0d0e0f.0"
	for _, subj := range []string{old, young} {
		if _, err := js.Publish(ctx, subj, []byte("orphan")); err != nil {
			t.Fatal(err)
		}
	}
	put(ctx, t, openStore(ctx, t, js), 4, bigState(2, 10))
	stream, err := js.Stream(ctx, subjects.CheckpointStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(subjects.CheckpointPrefix+"c.p-4.>"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := info.State.Subjects[old]; ok {
		t.Errorf("an orphaned chunk an hour old is still stored")
	}
	if _, ok := info.State.Subjects[young]; !ok {
		t.Errorf("a chunk a put may be writing was purged")
	}
	if len(info.State.Subjects) != 2 {
		t.Errorf("chunks stored: %v, want the young orphan and the checkpoint's one", info.State.Subjects)
	}
	if got, err := s.Load(ctx, 4); err != nil || got.Seq != 2 {
		t.Fatalf("Load: %v, %v", got, err)
	}
}

// TestStreamMadeByHandRefused: a checkpoint stream without one message
// a subject, or with direct gets, is refused with what it needs, not
// used to lose checkpoints.
func TestStreamMadeByHandRefused(t *testing.T) {
	_, js := dial(t, startNATS(t, 0))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := checkpoint.StreamConfig(1)
	cfg.MaxMsgsPerSubject, cfg.AllowDirect = -1, true
	s, err := js.CreateStream(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkpoint.New(ctx, js, s); err == nil || !strings.Contains(err.Error(), "max messages per subject 1") {
		t.Fatalf("New on a stream made by hand: %v", err)
	}
}
