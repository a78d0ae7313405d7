package worker_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/internal/syncbuf"
	"github.com/edgefence/edgefence/worker"
)

// reloadedFences is testFences with "c" removed and "d" over the same
// ground.
const reloadedFences = `{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"a","properties":{"dwell":2},"geometry":{"type":"Polygon","coordinates":[[[13.4010,52.4],[13.4040,52.4],[13.4040,52.7],[13.4010,52.7],[13.4010,52.4]]]}},
 {"type":"Feature","id":"b","properties":{"dwell":1},"geometry":{"type":"Polygon","coordinates":[[[13.4050,52.4],[13.4070,52.4],[13.4070,52.7],[13.4050,52.7],[13.4050,52.4]]]}},
 {"type":"Feature","id":"d","properties":{"dwell":0},"geometry":{"type":"Polygon","coordinates":[[[13.4080,52.4],[13.4110,52.4],[13.4110,52.7],[13.4080,52.7],[13.4080,52.4]]]}}
]}`

// TestFenceReload: a reload on one worker reaches the partitions through
// their streams: a device inside a removed fence gets its EXIT
// (fence_removed), a new fence its ENTER at the next ping. A worker
// started later with the old file, replaying from a checkpoint taken
// before the reload, switches at the same message: its replay decides
// exactly what was recorded (the history stream drops every output as a
// duplicate), and the device's next ping is judged by the new fences. An
// invalid file changes nothing.
func TestFenceReload(t *testing.T) {
	const p = 2
	url, mqttAddr := startNATS(t, p, `listen: "127.0.0.1:-1"
mqtt { listen: "127.0.0.1:-1" }
`)
	nc := connect(t, url)
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := securedConfig(t, url, mqttAddr)
	base.Partitions, base.Lease, base.CheckpointEvery = p, 2*time.Second, time.Second
	var logs syncbuf.Buffer
	base.Log = slog.New(slog.NewTextHandler(&logs, nil))
	writeFences := func(s string) {
		t.Helper()
		if err := os.WriteFile(base.Fences, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	start := func(name string) *worker.Worker {
		t.Helper()
		cfg := base
		cfg.Name = name
		w, err := worker.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		waitOwnedAll(t, w, p)
		return w
	}
	tracker := mqttClient(t, "tracker", mqttAddr)
	ping := func(lon float64) {
		t.Helper()
		body := fmt.Sprintf(`{"lat":52.5,"lon":%.4f,"ts":%d}`, lon, time.Now().UnixMilli())
		if tok := tracker.Publish("devices/dev-1/telemetry", 1, false, body); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatal(tok.Error())
		}
	}
	// history waits until the history stream holds an output on topic
	// containing want, and returns the whole stream.
	history := func(topic, want string) []received {
		t.Helper()
		for range 200 {
			h := historyOf(t, js)
			for _, r := range h {
				if r.topic == topic && strings.Contains(r.body, want) {
					return h
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("no %s on %s in the history:\n%v\n%s", want, topic, historyOf(t, js), logs.String())
		return nil
	}

	w := start("w1")
	dash := mqttClient(t, "dash", mqttAddr)
	expectEnter(t, tracker, dash, "dev-1") // inside "c"

	// A checkpoint of dev-1's partition from before the reload.
	var part int
	var pingSeq uint64
	for _, m := range pingsOf(t, js) {
		if strings.HasSuffix(m.subject, ".devices.dev-1.telemetry") {
			part, pingSeq = m.part, m.seq
		}
	}
	obs, err := js.ObjectStore(ctx, worker.CheckpointBucket)
	if err != nil {
		t.Fatal(err)
	}
	var old []byte
	for range 300 {
		if seq, err := worker.CheckpointSeq(ctx, js, part); err == nil && seq >= pingSeq {
			old, _ = obs.GetBytes(ctx, "p-"+strconv.Itoa(part))
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if old == nil {
		t.Fatal("no checkpoint after the ENTER")
	}

	// An invalid file: refused, nothing published.
	before := len(pingsOf(t, js))
	writeFences(`{"type":"FeatureCollection","features":[{"type":"Feature"}]}`)
	if err := w.ReloadFences(); err == nil {
		t.Fatal("an invalid fence file was reloaded")
	}
	for _, m := range pingsOf(t, js)[before:] {
		if strings.HasSuffix(m.subject, "._fences") {
			t.Fatalf("an invalid reload published %s", m.subject)
		}
	}

	writeFences(reloadedFences)
	if err := w.ReloadFences(); err != nil {
		t.Fatal(err)
	}
	history("geofence/c/dev-1", `"reason":"fence_removed"`)
	ping(13.4090)
	history("geofence/d/dev-1", `"type":"ENTER"`)
	waitQuiet(t, js, 2*time.Second)
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	recorded := historyOf(t, js)

	// A worker with the old file replays from before the reload.
	writeFences(testFences)
	if _, err := obs.PutBytes(ctx, "p-"+strconv.Itoa(part), old); err != nil {
		t.Fatal(err)
	}
	started := strings.Count(logs.String(), `msg="partition owned"`)
	w = start("w2")
	defer func() { _ = w.Close(context.Background()) }()
	for i := 0; strings.Count(logs.String(), `msg="partition owned"`) < started+p; i++ {
		if i == 300 {
			t.Fatalf("the partitions did not start:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "the fences file differs from the cluster's fence set") {
		t.Error("no warning that the worker's file is not the cluster's fence set")
	}
	waitQuiet(t, js, 2*time.Second)
	if got := historyOf(t, js); len(got) != len(recorded) {
		t.Fatalf("the replay recorded %d outputs more:\n%v", len(got)-len(recorded), got[len(recorded):])
	}
	ping(13.3000) // leaves "d", which only the reloaded fences have
	h := history("geofence/d/dev-1", `"type":"EXIT"`)
	for _, r := range h[len(recorded):] {
		if strings.HasPrefix(r.topic, "geofence/c/") {
			t.Errorf("after the replay, an output of the removed fence: %s %s", r.topic, r.body)
		}
	}
	if strings.Contains(logs.String(), "level=ERROR msg=\"replay") {
		t.Errorf("a stale replay reported:\n%s", logs.String())
	}
}
