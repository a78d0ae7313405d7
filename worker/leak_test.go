package worker_test

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestObjectPutLeak measures the nats.go object-store goroutine leak
// (docs/scale-out.md, "Not built yet"): goroutines left blocked in
// resetPendingAcksOnReconnect after 5,000 PutBytes. A measurement for
// the upstream report, not in the default test command.
func TestObjectPutLeak(t *testing.T) {
	if os.Getenv("EDGEFENCE_NATS_LEAK") != "1" {
		t.Skip("EDGEFENCE_NATS_LEAK=1 to measure")
	}
	url, _ := startNATS(t, 1, `listen: "127.0.0.1:-1"`)
	js, _ := jetstream.New(connect(t, url))
	ctx := context.Background()
	obs, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "leak"})
	if err != nil {
		t.Fatal(err)
	}
	const puts = 5000
	for range puts {
		if _, err := obs.PutBytes(ctx, "p-0", make([]byte, 2000)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	buf := make([]byte, 1<<24)
	n := runtime.Stack(buf, true)
	t.Logf("%d puts: %d goroutines left blocked in resetPendingAcksOnReconnect", puts,
		strings.Count(string(buf[:n]), "resetPendingAcksOnReconnect("))
}
