package broker_test

// Dashboards on any serve --cluster node (issue 34): a worker writes the
// retained state to the retained bucket, every serve node follows it into
// its own mochi. A real three-node NATS cluster in this process, real
// brokers and dashboards over MQTT on loopback TCP.

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pahopackets "github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/internal/mqtttest"
	"github.com/edgefence/edgefence/internal/natstest"
	"github.com/edgefence/edgefence/pingstream"
	"github.com/edgefence/edgefence/worker"
	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/subjects"
)

// serveNode starts a serve --cluster broker on urls (R3).
func serveNode(t *testing.T, urls, name string) *broker.Server {
	t.Helper()
	cfg := testConfig(t)
	cfg.Cluster = &pingstream.Options{NATS: urls, Name: name, Partitions: 2, Replicas: 3,
		PingsMaxAge: time.Hour, Timeout: 2 * time.Second}
	return start(t, cfg)
}

// TestClusterDashboardOnAnyServeNode: a ping sent to serve node A makes
// its ENTER at a dashboard on node B — live, once, for a dashboard
// subscribed before, and retained for one subscribing after — through a
// worker that has no NATS MQTT side; a late ping's report, not retained,
// comes to the live dashboard (from the history stream) and not to the
// later one.
func TestClusterDashboardOnAnyServeNode(t *testing.T) {
	srvs := startNATS3(t)
	urls := clientURLs(srvs)
	a, b := serveNode(t, urls, "serve-a"), serveNode(t, urls, "serve-b")
	cfg := testConfig(t)
	wc := worker.DefaultConfig()
	wc.NATS, wc.MQTT, wc.Name, wc.Fences = urls, "", "w1", cfg.Fences
	wc.Partitions, wc.Replicas, wc.Lease, wc.CheckpointEvery = 2, 3, 2*time.Second, time.Second
	wc.DedupWindow, wc.PingsMaxAge, wc.HTTPAddr, wc.Log = 2*time.Minute, time.Hour, "", testLog()
	wc.Engine = cfg.Engine
	wc.Engine.History = 0 // a ping behind the watermark is reported late, not placed
	startWorker(t, wc)
	live := connect5(t, b.MQTTAddr(), "live")
	live.Wait = 30 * time.Second // the worker takes its partitions first
	live.Subscribe("geofence/#", "edgefence/late/#")

	tr := connect5(t, a.MQTTAddr(), "tracker")
	ts0 := time.Now().Add(-30 * time.Second).UnixMilli()
	tr.ping("dash-1", outLat, outLon, ts0)
	tr.ping("dash-1", museumLat, museumLon, ts0+1000)
	tr.ping("dash-1", museumLat, museumLon, ts0+2000)
	m := live.Next("the ENTER at a dashboard on node B")
	enter := decodeTransition(t, "geofence", m)
	if enter.short() != "ENTER zone-museumsinsel dash-1" {
		t.Fatalf("node B's dashboard got %s first, want the ENTER", enter.short())
	}
	if !m.Retain {
		t.Error("the live ENTER is not retained on node B (retain as published)")
	}

	// Older than the last released ping by more than the hold: late.
	tr.ping("dash-1", museumLat, museumLon, ts0+500)
	m = live.Next("the late report at node B")
	if !strings.HasPrefix(m.Topic, "edgefence/late/") || m.Retain {
		t.Fatalf("node B's dashboard got %s (retain %v) after the ENTER, want the late report, not retained", m.Topic, m.Retain)
	}
	for _, m := range live.Sync() {
		t.Errorf("node B's live dashboard got %s again (or more): %s", m.Topic, m.Payload)
	}

	later := connect5(t, b.MQTTAddr(), "later")
	later.RetainAsPublished = false // the retain flag marks what the SUBSCRIBE replays
	later.Subscribe("geofence/#", "edgefence/late/#")
	got := later.Sync()
	if len(got) != 1 || !got[0].Retain || got[0].Topic != m0Topic(enter) {
		var topics []string
		for _, m := range got {
			topics = append(topics, fmt.Sprintf("%s retain=%v", m.Topic, m.Retain))
		}
		t.Fatalf("a dashboard subscribing on node B later got %v, want the retained ENTER alone", topics)
	}
	if again := decodeTransition(t, "geofence", got[0]); again.short() != enter.short() || again.Ts != enter.Ts {
		t.Errorf("retained %s @%d, live %s @%d", again.short(), again.Ts, enter.short(), enter.Ts)
	}
}

// m0Topic is a transition's retained topic.
func m0Topic(tr transition) string { return "geofence/" + tr.Fence + "/" + tr.Device }

// TestClusterRetainedAfterBucketLeaderLoss is issue 34's bar for
// dashboards: 15,000 retained topics, each recorded in the history
// stream and then written to the bucket (with the worker's own function)
// as a worker does, and the leader of both streams shut down while
// devices' values keep changing. Then a dashboard subscribing on a node
// that followed through the loss, and on a node started after it, gets
// all of them; and a dashboard subscribed before the loss got every
// device's updates, each once, in order. The times are logged (no timed
// assertion: a shared machine), bounded only by a generous timeout.
func TestClusterRetainedAfterBucketLeaderLoss(t *testing.T) {
	srvs := startNATS3(t)
	urls := clientURLs(srvs)
	a := serveNode(t, urls, "serve-a")
	nc, err := nats.Connect(urls, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	kv, err := cluster.RetainedBucket(ctx, js, 3)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: subjects.HistoryStream,
		Subjects: []string{subjects.HistoryPrefix + ">"}, Replicas: 3, Duplicates: 2 * time.Minute})
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	// put records a retained output and writes it to the bucket, as a
	// partition does, until both are stored.
	put := func(topic, body, id string) time.Time {
		for try := 0; ; try++ {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			m := &nats.Msg{Subject: subjects.History(0), Data: []byte(body), Header: nats.Header{}}
			m.Header.Set(jetstream.MsgIDHeader, id)
			m.Header.Set(subjects.HeaderTopic, topic)
			m.Header.Set(subjects.HeaderRetain, "1")
			_, err := js.PublishMsg(ctx, m)
			if err == nil {
				err = cluster.PutRetained(ctx, js, kv, topic, []byte(body), id)
			}
			cancel()
			if err == nil {
				return time.Now()
			}
			if try == 150 {
				t.Errorf("put %s: %v", topic, err)
				return time.Now()
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	const seeded = 15000
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for i := g; i < seeded; i += 32 {
				dev := fmt.Sprintf("seed-%05d", i)
				put(fmt.Sprintf("geofence/zone-%d/%s", i%50, dev), `{"device":"`+dev+`","type":"ENTER"}`, dev)
			}
		})
	}
	wg.Wait()
	waitRetained(t, a, seeded)

	live := collect(t, a.MQTTAddr(), "live", "geofence/live/#")
	const devices, updates = 20, 20
	acked := make([][]time.Time, devices)
	// The victim is the node of node A's history consumer, made the
	// leader of the history and of the bucket too: the loss takes all.
	stream := "KV_" + subjects.RetainedBucket
	leader := leadOn(t, nc, js, subjects.HistoryStream, consumerNode(t, js, subjects.HistoryStream))
	leadOn(t, nc, js, stream, leader)
	for d := range devices {
		wg.Go(func() {
			for n := range updates {
				dev := "live-" + strconv.Itoa(d)
				acked[d] = append(acked[d], put("geofence/live/"+dev, strconv.Itoa(n), dev+"-"+strconv.Itoa(n)))
				time.Sleep(time.Second) // a key changes more often only in tests
			}
		})
	}
	time.Sleep(3 * time.Second)
	var killed *server.Server
	for _, s := range srvs {
		if s.Name() == leader {
			killed = s
		}
	}
	killedAt := time.Now()
	killed.Shutdown()
	killed.WaitForShutdown()
	wg.Wait()
	after := clientURLs(srvs)
	if now := streamLeader(t, js, stream); now == leader {
		t.Fatalf("the bucket's leader is still %s", now)
	}

	// Every update, once, in order, at the dashboard subscribed before.
	want := devices * updates
	msgs := live.await(t, func(ms []got) bool { return len(ms) >= want }, time.Minute)
	var gap time.Duration
	perDev := map[string][]string{}
	for _, m := range msgs {
		dev := strings.TrimPrefix(m.topic, "geofence/live/")
		perDev[dev] = append(perDev[dev], m.body)
		d, _ := strconv.Atoi(strings.TrimPrefix(dev, "live-"))
		n, _ := strconv.Atoi(m.body)
		if d < devices && n < updates && acked[d][n].After(killedAt) {
			gap = max(gap, m.at.Sub(acked[d][n]))
		}
	}
	for d := range devices {
		var seq []string
		for n := range updates {
			seq = append(seq, strconv.Itoa(n))
		}
		if dev := "live-" + strconv.Itoa(d); !slices.Equal(perDev[dev], seq) {
			t.Errorf("%s: the live dashboard got %v, want %v", dev, perDev[dev], seq)
		}
	}
	t.Logf("bucket leader %s shut down; the live dashboard's longest wait for an update acknowledged after it: %v; watcher replacements %v",
		leader, gap.Round(time.Millisecond), metric(t, a, `edgefence_cluster_follow_restarts_total{source="history"}`))

	// A new dashboard on the node that followed through the loss, and on
	// a node started after it, gets every retained topic.
	b := serveNode(t, after, "serve-b")
	for name, srv := range map[string]*broker.Server{"followed through the loss": a, "started after it": b} {
		dash := collect(t, srv.MQTTAddr(), "dash", "geofence/#")
		ms := dash.await(t, func(ms []got) bool { return len(ms) >= seeded+devices }, time.Minute)
		topics := map[string]bool{}
		for _, m := range ms {
			if !m.retain {
				t.Errorf("node %s: %s not sent as retained", name, m.topic)
			}
			topics[m.topic] = true
		}
		if len(topics) != seeded+devices {
			t.Errorf("node %s: %d distinct retained topics, want %d", name, len(topics), seeded+devices)
		}
		t.Logf("node %s: %d retained topics to a new dashboard in %v", name, len(ms), ms[len(ms)-1].at.Sub(dash.subscribed).Round(time.Millisecond))
	}
}

// waitRetained waits (a minute at most) until srv retains n messages.
func waitRetained(t *testing.T, srv *broker.Server, n float64) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		v := metric(t, srv, "edgefence_mqtt_retained_messages")
		if v >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v of %v retained after a minute", v, n)
		}
	}
}

// consumerNode returns the node of stream's one consumer (a follower's
// watcher).
func consumerNode(t *testing.T, js jetstream.JetStream, stream string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	var nodes []string
	cl := s.ListConsumers(ctx)
	for info := range cl.Info() {
		if info.Cluster != nil {
			nodes = append(nodes, info.Cluster.Leader)
		}
	}
	if err := cl.Err(); err != nil || len(nodes) != 1 {
		t.Fatalf("%s: consumers on %v (%v), want the follower's one", stream, nodes, err)
	}
	return nodes[0]
}

// leadOn makes server stream's leader, if it can within a few seconds,
// and returns the leader.
func leadOn(t *testing.T, nc *nats.Conn, js jetstream.JetStream, stream, server string) string {
	t.Helper()
	leader := ""
	for range 20 {
		if leader = streamLeader(t, js, stream); leader == server {
			break
		}
		req := fmt.Sprintf(`{"placement":{"preferred":%q}}`, server)
		if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, []byte(req), 2*time.Second); err != nil {
			t.Logf("%s: leader step-down: %v", stream, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("%s: leader %s, the follower's consumer on %s", stream, leader, server)
	return leader
}

// streamLeader returns the name of stream's leader, waiting for one.
func streamLeader(t *testing.T, js jetstream.JetStream, stream string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		leader, err := natstest.Leader(js, stream)
		if leader != "" {
			return leader
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no leader: %v", stream, err)
		}
	}
}

// got is a message a collector received, and when.
type got struct {
	topic, body string
	retain      bool
	at          time.Time
}

// collector is a dashboard that keeps every message it receives, however
// many (mqtttest's client buffers a few thousand).
type collector struct {
	mu         sync.Mutex
	msgs       []got
	subscribed time.Time // when its SUBSCRIBE was sent
}

// collect connects a dashboard to addr and subscribes it to filter.
func collect(t *testing.T, addr, name, filter string) *collector {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	cl := paho.NewClient(paho.ClientConfig{
		Conn: pahopackets.NewThreadSafeConn(conn),
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			c.mu.Lock()
			c.msgs = append(c.msgs, got{pr.Packet.Topic, string(pr.Packet.Payload), pr.Packet.Retain, time.Now()})
			c.mu.Unlock()
			return true, nil
		}},
		PacketTimeout: wait,
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := cl.Connect(ctx, &paho.Connect{ClientID: mqtttest.ID(name), KeepAlive: 30, CleanStart: true}); err != nil {
		conn.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Disconnect(&paho.Disconnect{}) })
	c.subscribed = time.Now()
	if _, err := cl.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: filter, QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	return c
}

// await returns the messages once done says they are all there, or
// fails the test after within and returns what came.
func (c *collector) await(t *testing.T, done func([]got) bool, within time.Duration) []got {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		c.mu.Lock()
		ms := slices.Clone(c.msgs)
		c.mu.Unlock()
		if done(ms) {
			return ms
		}
		if time.Now().After(deadline) {
			t.Errorf("%d messages after %v", len(ms), within)
			return ms
		}
	}
}
