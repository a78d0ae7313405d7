package worker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker"
	"github.com/edgefence/edgefence/worker/checkpoint"
	"github.com/edgefence/edgefence/worker/subjects"
)

// TestFailedCheckpointKeepsPrevious: a checkpoint whose store fails
// part-way (its chunk refused, its meta message accepted) leaves the
// partition's previous checkpoint in place, and the next owner loads it.
// nats.go as released (v1.56.0) stores the new meta over chunks it then
// purges, so the checkpoint could never be read again and the partition
// never owned (third_party/patches/nats.go/0001).
func TestFailedCheckpointKeepsPrevious(t *testing.T) {
	js, base, logs := onePartition(t)
	base.DedupWindow = 6 * time.Second // the least Validate allows with these
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	waitLog := func(msg string, n int) {
		t.Helper()
		for i := 0; strings.Count(logs.String(), msg) < n; i++ {
			if i == 300 {
				t.Fatalf("no %s in the log:\n%s", msg, logs.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	cfg := base
	w, err := worker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitOwnedAll(t, w, 1)
	waitLog(`msg="partition owned"`, 1)
	tracker, dash := mqttClient(t, "tracker", base.MQTT), mqttClient(t, "dash", base.MQTT)
	expectEnter(t, tracker, dash, "dev-1")
	var saved uint64
	for range 300 {
		if saved, _ = checkpoint.Seq(ctx, js, 0); saved > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if saved == 0 {
		t.Fatalf("no checkpoint was saved:\n%s", logs.String())
	}

	// Room for one more meta message in the bucket, not for a checkpoint.
	obs, err := js.ObjectStore(ctx, subjects.CheckpointBucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := obs.GetInfo(ctx, "p-0")
	if err != nil {
		t.Fatal(err)
	}
	const metaRoom = 600 // a meta message is about 350 bytes with its subject and headers
	if info.Size < 2*metaRoom {
		t.Fatalf("a checkpoint of %d bytes is too small to be refused where a meta message fits", info.Size)
	}
	status, err := obs.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.UpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
		Bucket: subjects.CheckpointBucket, Storage: jetstream.FileStorage, MaxBytes: int64(status.Size()) + metaRoom,
	}); err != nil {
		t.Fatal(err)
	}

	// The worker's own checkpoints now fail: the periodic ones after a
	// new ping, and the final one on hand-over.
	if tok := tracker.Publish("devices/dev-1/telemetry", 1, false,
		fmt.Sprintf(`{"lat":52.5,"lon":13.3000,"ts":%d}`, time.Now().UnixMilli())); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	waitLog(`msg="checkpoint failed"`, 1)
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	waitLog(`msg="final checkpoint failed`, 1)

	c, cancelLoad := context.WithTimeout(ctx, 5*time.Second)
	defer cancelLoad()
	if seq, err := checkpoint.Seq(c, js, 0); err != nil || seq != saved {
		t.Fatalf("after failed checkpoints the partition's is at %d (%v), want the previous one at %d", seq, err, saved)
	}

	// The next owner starts from it (its store's limit is lifted by the
	// worker's CreateOrUpdateObjectStore).
	cfg.Name = "w2"
	w, err = worker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	waitOwnedAll(t, w, 1)
	waitLog(`msg="partition owned"`, 2)
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
