package retainfollow_test

import (
	"context"
	"fmt"
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

// recorder is a Sink that keeps what it was given, in order, per device
// (the topic's last level).
type recorder struct {
	mu  sync.Mutex
	got map[string][]string
	n   int
}

func (r *recorder) Retain(topic string, body []byte)  { r.add(topic, body) }
func (r *recorder) Publish(topic string, body []byte) { r.add(topic, body) }

func (r *recorder) add(topic string, body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	dev := topic[strings.LastIndexByte(topic, '/')+1:]
	r.got[dev] = append(r.got[dev], topic+" "+string(body))
	r.n++
}

// TestFollowerDeliversEachDeviceInRecordedOrder: records are written as
// a partition writes them, each retained one to the bucket after its
// history record, a late report (not retained) and then a transition
// (retained) per device, many devices at once. The follower delivers
// each device's outputs in the history's order. It once delivered the
// retained ones from the bucket and the rest from the history stream,
// and a transition overtook the late report recorded before it.
func TestFollowerDeliversEachDeviceInRecordedOrder(t *testing.T) {
	dir := t.TempDir()
	ns, _ := natstest.Start(t, dir, "nats.conf", fmt.Sprintf(
		"listen: \"127.0.0.1:-1\"\njetstream { store_dir: %q }\n", filepath.Join(dir, "js")))
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: subjects.HistoryStream, Subjects: []string{subjects.HistoryPrefix + ">"}}); err != nil {
		t.Fatal(err)
	}
	kv, err := cluster.RetainedBucket(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{got: map[string][]string{}}
	f, err := retainfollow.Start(retainfollow.Options{NATS: ns.ClientURL(), Name: "order", Replicas: 1}, rec)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	const devices, rounds = 50, 10
	want := map[string][]string{}
	for r := range rounds {
		for i := range devices {
			dev := fmt.Sprintf("dev-%02d", i)
			late := fmt.Sprintf(`{"late":%d}`, r)
			enter := fmt.Sprintf(`{"enter":%d}`, r)
			record := func(topic, body string, retain bool) {
				m := &nats.Msg{Subject: subjects.History(0), Data: []byte(body), Header: nats.Header{}}
				m.Header.Set(subjects.HeaderTopic, topic)
				if retain {
					m.Header.Set(subjects.HeaderRetain, "1")
				}
				if _, err := js.PublishMsg(ctx, m); err != nil {
					t.Fatal(err)
				}
				want[dev] = append(want[dev], topic+" "+body)
			}
			record("edgefence/late/"+dev, late, false)
			record("geofence/a/"+dev, enter, true)
			if err := cluster.PutRetained(ctx, js, kv, "geofence/a/"+dev, []byte(enter), fmt.Sprintf("%s-%d", dev, r)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		rec.mu.Lock()
		n := rec.n
		rec.mu.Unlock()
		if n >= 2*devices*rounds {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d outputs delivered in 30 s", n, 2*devices*rounds)
		}
	}
	time.Sleep(200 * time.Millisecond) // anything delivered twice
	rec.mu.Lock()
	defer rec.mu.Unlock()
	bad := 0
	for dev, w := range want {
		if !slices.Equal(rec.got[dev], w) {
			if bad++; bad <= 3 {
				t.Errorf("%s: delivered %v,\nrecorded %v", dev, rec.got[dev], w)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d devices delivered out of the recorded order", bad, devices)
	}
}
