package worker_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/worker"
	"github.com/edgefence/edgefence/worker/checkpoint"
	"github.com/edgefence/edgefence/worker/subjects"
)

// TestFailedCheckpointKeepsPrevious: a checkpoint whose store fails
// part-way (its chunk refused where its head would fit) leaves the
// partition's previous checkpoint in place, and the next owner loads it.
// nats.go's object store, which held checkpoints before, stored the new
// meta over chunks it then purged, so the checkpoint could never be read
// again and the partition never owned.
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

	// Room for one more head in the checkpoint stream, not for a
	// checkpoint.
	store, err := checkpoint.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	data, err := store.Saved(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	const headRoom = 600 // a head is about 250 bytes with its subject and headers
	if len(data) < 2*headRoom {
		t.Fatalf("a checkpoint of %d bytes is too small to be refused where a head fits", len(data))
	}
	stream, err := js.Stream(ctx, subjects.CheckpointStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	limited := info.Config
	limited.MaxBytes = int64(info.State.Bytes) + headRoom
	if _, err := js.UpdateStream(ctx, limited); err != nil {
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

	// The next owner starts from it, the limit lifted.
	if _, err := js.UpdateStream(ctx, info.Config); err != nil {
		t.Fatal(err)
	}
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
