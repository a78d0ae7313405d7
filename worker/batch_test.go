package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/checkpoint"
	"github.com/edgefence/edgefence/worker/subjects"
)

// TestBatchKilledInFlight kills a worker with kill -9 while it drains a
// backlog, when its partitions publish the outputs of hundreds of
// messages at once: the worker that takes over finishes what the dead
// one left half-published, and the dashboard still gets every
// transition once and in order per device, the history stream holds
// each once, and the retained store is exact.
func TestBatchKilledInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS cluster and two worker processes")
	}
	const p, devices, rounds = 4, 200, 24
	c := startWorkerCluster(t, p, 3*time.Second)
	nc := connect(t, c.urls)
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: subjects.PingStream, Subjects: []string{subjects.PingSubjectPrefix + ">"}, Replicas: 3, Storage: jetstream.FileStorage, MaxAge: time.Hour}); err != nil {
		t.Fatal(err)
	}
	// The backlog: every device drives east across the stripes.
	for r := range rounds {
		for i := range devices {
			lon := 13.4000 + float64((i*7+r*4)%130)*0.0001
			body := fmt.Sprintf(`{"lat":%.5f,"lon":%.5f,"ts":%d}`, 52.45+float64(i%1000)*0.0002, lon, time.Now().UnixMilli())
			if _, err := js.PublishAsync(fmt.Sprintf("devices.dev-%04d.telemetry", i), []byte(body)); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-js.PublishAsyncComplete():
		case <-ctx.Done():
			t.Fatal("the backlog was not acknowledged")
		}
	}

	t.Logf("%d pings loaded in %v", rounds*devices, time.Since(start).Round(time.Millisecond))

	dash := c.dashboard()
	recorded := func() uint64 {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, subjects.HistoryStream)
		if err != nil {
			return 0
		}
		info, err := s.Info(ctx)
		if err != nil {
			return 0
		}
		return info.State.Msgs
	}
	// Kill w1 once it has published 150 history records: well into the
	// backlog, with batches in flight. The records are counted as they
	// go out, not by polling the stream, whose answers can take long
	// enough on a busy box for w1 to finish the whole backlog first.
	var published atomic.Int64
	reached := make(chan struct{})
	sub, err := nc.Subscribe(subjects.HistoryPrefix+">", func(*nats.Msg) {
		if published.Add(1) == 150 {
			close(reached)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	w1 := c.startWorker("w1")
	select {
	case <-reached:
	case <-time.After(2 * time.Minute):
		t.Fatalf("w1 published only %d history records in two minutes", published.Load())
	}
	w1.kill()
	_ = sub.Unsubscribe()
	killedAt := time.Since(start)
	atKill := recorded()
	w2 := c.startWorker("w2")
	waitOwned(t, js, p, "w2")
	waitQuiet(t, js, 5*time.Second)
	w2.stop(t)
	t.Logf("kill -9 of w1 at %v, at %d history records of %d; w2 done at %v, took over:\n%s",
		killedAt.Round(time.Millisecond), atKill, recorded(), time.Since(start).Round(time.Millisecond), grepLines(w2.out.String(), "partition owned"))

	ckpt := map[int]uint64{}
	for n := range p {
		var err error
		if ckpt[n], err = checkpoint.Seq(ctx, js, n); err != nil {
			t.Fatal(err)
		}
	}
	perPart := map[int][]streamMsg{}
	for _, m := range readPings(t, js) {
		if m.seq <= ckpt[m.part] {
			perPart[m.part] = append(perPart[m.part], m)
		}
	}
	var want []received
	for n := range p {
		if len(perPart[n]) == 0 {
			t.Fatalf("partition %d: no checkpoint after its messages", n)
		}
		want = append(want, reference(t, c.set, perPart[n]).out...)
	}
	if atKill >= uint64(len(want)) {
		t.Fatalf("w1 was killed after it recorded everything (%d of %d): the test took over nothing", atKill, len(want))
	}
	got := dash.all()
	t.Logf("%d transitions and late pings expected, the dashboard received %d", len(want), len(got))
	diffDevices(t, "dashboard over MQTT", byDevice(got), byDevice(want))
	diffDevices(t, "history stream", byDevice(readHistory(t, js)), byDevice(want))
	retained := map[string]string{}
	for _, r := range want {
		if strings.HasPrefix(r.topic, "geofence/") && !strings.Contains(r.body, `"historic":true`) {
			retained[r.topic] = r.body
		}
	}
	rs, err := js.Stream(ctx, "$MQTT_rmsgs")
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for topic, w := range retained {
		m, err := rs.GetLastMsgForSubject(ctx, "$MQTT.rmsgs."+strings.ReplaceAll(topic, "/", "."))
		if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			t.Fatal(err)
		}
		if err != nil || string(m.Data) != w {
			if bad++; bad <= 3 {
				t.Errorf("retained %s: %v\n want %s", topic, err, w)
			}
		}
	}
	if bad > 0 {
		t.Errorf("retained store: %d of %d topics differ", bad, len(retained))
	}
}

// grepLines returns s's lines that contain one of subs.
func grepLines(s string, subs ...string) string {
	var out []string
	for l := range strings.Lines(s) {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "")
}
