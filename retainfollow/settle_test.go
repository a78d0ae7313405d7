package retainfollow_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/internal/natstest"
	"github.com/edgefence/edgefence/retainfollow"
	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/subjects"
)

// settleWindow is the tests' settle window: short, so the window ends
// within the test, and long enough for the writes made right after
// Start to fall within it.
const settleWindow = 300 * time.Millisecond

// journal is a Sink that keeps every call, in the order it was made.
type journal struct {
	mu    sync.Mutex
	calls []string // "retain topic body" or "publish topic body"
}

func (j *journal) Retain(topic string, body []byte)  { j.add("retain", topic, body) }
func (j *journal) Publish(topic string, body []byte) { j.add("publish", topic, body) }

func (j *journal) add(kind, topic string, body []byte) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls = append(j.calls, kind+" "+topic+" "+string(body))
}

// of returns the calls for topic, in order.
func (j *journal) of(topic string) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var got []string
	for _, c := range j.calls {
		if strings.SplitN(c, " ", 3)[1] == topic {
			got = append(got, c)
		}
	}
	return got
}

// waitFor waits (bounded) until topic has had a call.
func (j *journal) waitFor(t *testing.T, topic string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); len(j.of(topic)) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("nothing delivered for %s within 10 s; delivered: %q", topic, j.all())
		}
	}
}

func (j *journal) all() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.calls)
}

// clusterWriter is a NATS server with the history stream and the
// retained bucket, written to as a worker writes: a record, then (for a retained
// output) the bucket's value.
type clusterWriter struct {
	t   *testing.T
	url string
	ctx context.Context
	js  jetstream.JetStream
	kv  jetstream.KeyValue
	n   int
}

func startCluster(t *testing.T) *clusterWriter {
	t.Helper()
	dir := t.TempDir()
	ns, _ := natstest.Start(t, dir, "nats.conf", fmt.Sprintf(
		"listen: \"127.0.0.1:-1\"\njetstream { store_dir: %q }\n", filepath.Join(dir, "js")))
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: subjects.HistoryStream, Subjects: []string{subjects.HistoryPrefix + ">"}}); err != nil {
		t.Fatal(err)
	}
	kv, err := cluster.RetainedBucket(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	return &clusterWriter{t: t, url: ns.ClientURL(), ctx: ctx, js: js, kv: kv}
}

// record writes an output's history record.
func (c *clusterWriter) record(topic, body string, retain bool) {
	c.t.Helper()
	m := &nats.Msg{Subject: subjects.History(0), Data: []byte(body), Header: nats.Header{}}
	m.Header.Set(subjects.HeaderTopic, topic)
	if retain {
		m.Header.Set(subjects.HeaderRetain, "1")
	}
	if _, err := c.js.PublishMsg(c.ctx, m); err != nil {
		c.t.Fatal(err)
	}
}

// put writes a retained output's value to the bucket.
func (c *clusterWriter) put(topic, body string) {
	c.t.Helper()
	c.n++
	if err := cluster.PutRetained(c.ctx, c.js, c.kv, topic, []byte(body), fmt.Sprintf("put-%d", c.n)); err != nil {
		c.t.Fatal(err)
	}
}

// follow starts a follower with the tests' settle window.
func (c *clusterWriter) follow(sink retainfollow.Sink) *retainfollow.Follower {
	c.t.Helper()
	f, err := retainfollow.Start(retainfollow.Options{NATS: c.url, Name: c.t.Name(), Replicas: 1, SettleWindow: settleWindow}, sink)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(f.Close)
	return f
}

// settled waits until the settle window has ended, as a user sees it:
// late (recorded before Start, written to the bucket after) is
// retained. Then a record made after that is delivered, so whatever
// the follower delivers before it is delivered.
func (c *clusterWriter) settled(j *journal, late string) {
	c.t.Helper()
	j.waitFor(c.t, late)
	c.record("edgefence/late/sentinel", `{"sentinel":1}`, false)
	j.waitFor(c.t, "edgefence/late/sentinel")
}

// TestFollowerRetainsALateValueWhenTheSettleWindowEnds: a worker records
// a transition before a follower starts and writes its value to the
// bucket after: the bucket's values at start lack it and the history
// from start does not hold it, so it is retained (once) when the settle
// window ends. A value recorded before start and again after is the
// history's to deliver (the newer one, once), as is one recorded after
// start.
func TestFollowerRetainsALateValueWhenTheSettleWindowEnds(t *testing.T) {
	c := startCluster(t)
	const late, superseded, normal = "geofence/a/dev-late", "geofence/a/dev-superseded", "geofence/a/dev-normal"
	c.record(late, `{"enter":1}`, true)
	c.record(superseded, `{"enter":1}`, true)
	j := &journal{}
	c.follow(j)

	c.put(late, `{"enter":1}`)
	c.put(superseded, `{"enter":1}`)
	c.record(superseded, `{"exit":2}`, true)
	c.put(superseded, `{"exit":2}`)
	c.record(normal, `{"enter":1}`, true)
	c.put(normal, `{"enter":1}`)
	c.record(normal, `{"exit":2}`, true)
	c.put(normal, `{"exit":2}`)

	c.settled(j, late)
	for topic, want := range map[string][]string{
		late:       {"retain " + late + ` {"enter":1}`},
		superseded: {"retain " + superseded + ` {"exit":2}`},
		normal:     {"retain " + normal + ` {"enter":1}`, "retain " + normal + ` {"exit":2}`},
	} {
		if got := j.of(topic); !slices.Equal(got, want) {
			t.Errorf("%s: delivered %q, want %q", topic, got, want)
		}
	}
}

// TestFollowerDeliversAValueRecordedAfterStartFromTheHistoryOnly: the
// outputs a worker records after a follower's start, the retained ones
// also written to the bucket, are delivered once each, in the recorded
// order, from the history stream: not again from the bucket when the
// settle window ends. The bucket's values here carry a mark the records
// lack, so a value delivered from the bucket shows.
func TestFollowerDeliversAValueRecordedAfterStartFromTheHistoryOnly(t *testing.T) {
	c := startCluster(t)
	const late = "geofence/a/dev-late"
	c.record(late, `{"enter":1}`, true)
	j := &journal{}
	c.follow(j)

	c.put(late, `{"enter":1}`)
	devices := []string{"dev-1", "dev-2", "dev-3"}
	want := map[string][]string{}
	for r := range 3 {
		for _, dev := range devices {
			lateTopic, fence := "edgefence/late/"+dev, "geofence/a/"+dev
			c.record(lateTopic, fmt.Sprintf(`{"late":%d}`, r), false)
			c.record(fence, fmt.Sprintf(`{"enter":%d}`, r), true)
			c.put(fence, fmt.Sprintf(`{"enter":%d,"from":"bucket"}`, r))
			want[lateTopic] = append(want[lateTopic], fmt.Sprintf(`publish %s {"late":%d}`, lateTopic, r))
			want[fence] = append(want[fence], fmt.Sprintf(`retain %s {"enter":%d}`, fence, r))
		}
	}

	c.settled(j, late)
	for topic, w := range want {
		if got := j.of(topic); !slices.Equal(got, w) {
			t.Errorf("%s: delivered %q, want %q", topic, got, w)
		}
	}
}

// gatedJournal is a journal whose call for gate blocks until open is
// closed: a sink (a busy broker) that holds the history back.
type gatedJournal struct {
	journal
	gate string
	open chan struct{}
}

func (g *gatedJournal) Retain(topic string, body []byte) {
	g.wait(topic)
	g.journal.Retain(topic, body)
}
func (g *gatedJournal) Publish(topic string, body []byte) {
	g.wait(topic)
	g.journal.Publish(topic, body)
}

func (g *gatedJournal) wait(topic string) {
	if topic == g.gate {
		<-g.open
	}
}

// settleLog is a slog handler that signals the follower's settle
// retaining a value, the moment the settle has decided what to retain.
type settleLog struct{ retains chan struct{} }

func (h settleLog) Enabled(context.Context, slog.Level) bool { return true }
func (h settleLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h settleLog) WithGroup(string) slog.Handler            { return h }
func (h settleLog) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "cluster follower retains a value") {
		select {
		case h.retains <- struct{}{}:
		default:
		}
	}
	return nil
}

// TestFollowerSettlesOnlyOnceTheHistoryHasCaughtUp: when the settle
// window ends while the history is behind (here a sink that holds it
// back), a value recorded and written within the window is the
// history's to deliver, once. The settle once retained every topic the
// history had not delivered yet, and the history then delivered it
// again: twice, and (for a device with several outputs) an older value
// after the newer one.
func TestFollowerSettlesOnlyOnceTheHistoryHasCaughtUp(t *testing.T) {
	c := startCluster(t)
	const late, gate, held = "geofence/a/dev-late", "edgefence/late/dev-gate", "geofence/a/dev-held"
	c.record(late, `{"enter":1}`, true)
	j := &gatedJournal{gate: gate, open: make(chan struct{})}
	log := settleLog{retains: make(chan struct{}, 1)}
	f, err := retainfollow.Start(retainfollow.Options{NATS: c.url, Name: t.Name(), Replicas: 1,
		SettleWindow: settleWindow, Log: slog.New(log)}, j)
	if err != nil {
		close(j.open)
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	opened := false
	t.Cleanup(func() {
		if !opened {
			close(j.open)
		}
	})

	c.record(gate, `{"late":1}`, false) // the history blocks on it
	c.put(late, `{"enter":1}`)
	c.record(held, `{"enter":1}`, true)
	c.put(held, `{"enter":1}`)
	c.record(held, `{"exit":2}`, true)
	c.put(held, `{"exit":2}`)
	// Hold the history until the settle has decided, or (a follower
	// that waits for the history) for a while past the window.
	select {
	case <-log.retains:
	case <-time.After(10 * settleWindow):
	}
	close(j.open)
	opened = true

	c.settled(&j.journal, late)
	want := []string{"retain " + held + ` {"enter":1}`, "retain " + held + ` {"exit":2}`}
	if got := j.of(held); !slices.Equal(got, want) {
		t.Errorf("%s: delivered %q, want %q", held, got, want)
	}
}
