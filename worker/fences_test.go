package worker_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/internal/syncbuf"
	"github.com/edgefence/edgefence/worker"
	"github.com/edgefence/edgefence/worker/checkpoint"
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
	store, err := checkpoint.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	var old []byte
	for range 300 {
		if seq, err := checkpoint.Seq(ctx, js, part); err == nil && seq >= pingSeq {
			old, _ = store.Saved(ctx, part)
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
	if err := store.Restore(ctx, part, old); err != nil {
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

// TestFenceVersionsDeleted: after two reloads the versions no partition
// can need are deleted from the checkpoint store, counted and logged;
// versions a checkpoint or a fence message after it names stay, so a
// partition taken over from its checkpoint replays through two reloads
// published while nobody owned it and ends under the newest.
func TestFenceVersionsDeleted(t *testing.T) {
	defer worker.SetFenceGrace(0)()
	js, base, logs := onePartition(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var store *checkpoint.Store // once the first worker made its stream
	version := func(geojson string) string {
		sum := sha256.Sum256([]byte(geojson))
		return hex.EncodeToString(sum[:])
	}
	// stored returns the fence versions in the checkpoint store.
	stored := func() []string {
		t.Helper()
		vs, err := store.FenceVersions(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return vs
	}
	waitStored := func(want ...string) {
		t.Helper()
		slices.Sort(want)
		for range 300 {
			if slices.Equal(stored(), want) {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("fence versions stored %v, want %v\n%s", stored(), want, logs.String())
	}
	start := func(name, geojson string) *worker.Worker {
		t.Helper()
		if err := os.WriteFile(base.Fences, []byte(geojson), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg := base
		cfg.Name = name
		w, err := worker.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		waitOwnedAll(t, w, 1)
		return w
	}
	reload := func(w *worker.Worker, geojson string) {
		t.Helper()
		if err := os.WriteFile(base.Fences, []byte(geojson), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := w.ReloadFences(); err != nil {
			t.Fatal(err)
		}
	}
	sets := []string{testFences, reloadedFences, reloadedFences + "\n", reloadedFences + "\n\n", testFences + "\n"}
	var v []string
	for _, s := range sets {
		v = append(v, version(s))
	}

	// Two reloads on a live worker: only the newest is left.
	w := start("w1", sets[0])
	store, err := checkpoint.Open(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	tracker, dash := mqttClient(t, "tracker", base.MQTT), mqttClient(t, "dash", base.MQTT)
	expectEnter(t, tracker, dash, "dev-1") // a device: ticks, so checkpoints
	reload(w, sets[1])
	reload(w, sets[2])
	waitStored(v[2])
	if got := scrape(t, w.HTTPAddr())["edgefence_worker_fence_versions_deleted_total"]; got != "2" {
		t.Errorf("edgefence_worker_fence_versions_deleted_total %s, want 2", got)
	}
	if !strings.Contains(logs.String(), `msg="unused fence versions deleted"`) {
		t.Errorf("no deletion logged:\n%s", logs.String())
	}
	if err := w.Close(ctx); err != nil { // its checkpoint under v[2]
		t.Fatal(err)
	}

	// Two reloads while nobody owns the partition, as a worker publishes
	// them: the checkpoint's version, the one only a message names and the
	// current one all stay.
	for _, i := range []int{3, 4} {
		set, err := fence.Parse([]byte(sets[i]))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Publish(ctx, []byte(sets[i]), set, 1); err != nil {
			t.Fatal(err)
		}
	}
	if deleted, err := checkpoint.DeleteUnusedFences(ctx, js, 1); err != nil || len(deleted) > 0 {
		t.Fatalf("deleted %v (%v) while a replay still needs them", deleted, err)
	}
	waitStored(v[2], v[3], v[4])

	// The next owner replays through both and ends under the newest, with
	// "c" again; the versions before it go.
	w = start("w2", sets[4])
	defer func() { _ = w.Close(context.Background()) }()
	waitStored(v[4])
	enters := func() int {
		n := 0
		for _, r := range historyOf(t, js) {
			if r.topic == "geofence/c/dev-1" && strings.Contains(r.body, `"type":"ENTER"`) {
				n++
			}
		}
		return n
	}
	before := enters()
	body := fmt.Sprintf(`{"lat":52.5,"lon":13.4090,"ts":%d}`, time.Now().UnixMilli())
	if tok := tracker.Publish("devices/dev-1/telemetry", 1, false, body); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal(tok.Error())
	}
	for i := 0; enters() == before; i++ {
		if i == 300 {
			t.Fatalf("no ENTER of c under the newest fences:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("an error logged:\n%s", logs.String())
	}
}
