package broker_test

// serve --cluster end to end: trackers over real MQTT 5 on TCP to a
// broker that publishes their pings to a real NATS server's JetStream
// ping stream (in-process, JetStream on, R1), read back from the stream.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/internal/natstest"

	"github.com/eclipse/paho.golang/paho"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/mqtttest"
	"github.com/edgefence/edgefence/pingstream"
	"github.com/edgefence/edgefence/worker"
	"github.com/edgefence/edgefence/worker/subjects"
)

// natsNode is an in-process NATS server with JetStream and an MQTT
// listener (where a worker publishes transitions), which a test can stop
// and start again on the same port and store.
type natsNode struct {
	t    testing.TB
	dir  string
	port int // client port, fixed after the first start
	srv  *server.Server
	mqtt string
}

func startNATSNode(t testing.TB) *natsNode {
	t.Helper()
	n := &natsNode{t: t, dir: t.TempDir(), port: -1}
	n.start()
	t.Cleanup(n.stop)
	return n
}

func (n *natsNode) start() {
	n.t.Helper()
	conf := fmt.Sprintf("server_name: n1\nlisten: \"127.0.0.1:%d\"\njetstream { store_dir: %q }\nmqtt { listen: \"127.0.0.1:-1\" }\n",
		n.port, filepath.Join(n.dir, "js"))
	var opts *server.Options
	n.srv, opts = natstest.Start(n.t, n.dir, "nats.conf", conf)
	n.port = n.srv.Addr().(*net.TCPAddr).Port
	n.mqtt = fmt.Sprintf("127.0.0.1:%d", opts.MQTT.Port)
}

func (n *natsNode) stop() {
	if n.srv != nil {
		n.srv.Shutdown()
		n.srv.WaitForShutdown()
		n.srv = nil
	}
}

func (n *natsNode) url() string { return fmt.Sprintf("nats://127.0.0.1:%d", n.port) }

// clusterConfig is testConfig with --cluster on n, P partitions, R1.
func clusterConfig(t *testing.T, n *natsNode, p int) broker.Config {
	cfg := testConfig(t)
	cfg.Cluster = &pingstream.Options{NATS: n.url(), Name: "serve-1", Partitions: p, Replicas: 1,
		PingsMaxAge: time.Hour, Timeout: time.Second}
	return cfg
}

// streamPing is a ping as the stream holds it.
type streamPing struct {
	subject, topic string
	ts             int64
	lat, lon       float64
}

// readPingStream returns every ping of the ping stream, in order.
func readPingStream(t *testing.T, url string) []streamPing {
	t.Helper()
	var out []streamPing
	for _, m := range natstest.Messages(t, url, subjects.PingStream) {
		topic, tick := subjects.SplitPing(m.Subject)
		if tick {
			continue
		}
		var body struct {
			Lat, Lon float64
			Ts       int64
		}
		if err := json.Unmarshal(m.Data, &body); err != nil {
			t.Fatalf("message %d on %s: %v", m.Sequence, m.Subject, err)
		}
		out = append(out, streamPing{m.Subject, topic, body.Ts, body.Lat, body.Lon})
	}
	return out
}

// TestClusterPingsStoredBeforePUBACK: every ping a tracker got a PUBACK
// for is in the ping stream, exactly once, each device's in the order
// sent, on the partition subject an edgefence worker consumes.
func TestClusterPingsStoredBeforePUBACK(t *testing.T) {
	n := startNATSNode(t)
	const p = 4
	srv := start(t, clusterConfig(t, n, p))
	tr := connect5(t, srv.MQTTAddr(), "tracker")
	const devices, perDevice = 5, 40
	ts0 := time.Now().Add(-time.Hour).UnixMilli()
	for i := range perDevice {
		for d := range devices {
			tr.ping(fmt.Sprintf("dev-%d", d), museumLat+float64(i)*1e-5, museumLon, ts0+int64(i)*1000)
		}
	}
	// No time given for anything to arrive: acknowledged means stored.
	got := readPingStream(t, n.url())
	if len(got) != devices*perDevice {
		t.Fatalf("%d pings in the stream, %d acknowledged", len(got), devices*perDevice)
	}
	last := map[string]int64{}
	filters := ingest.DefaultFilters()
	for _, m := range got {
		if m.ts <= last[m.topic] {
			t.Errorf("%s: stamp %d after %d: a duplicate or out of order", m.topic, m.ts, last[m.topic])
		}
		last[m.topic] = m.ts
		if want, _ := subjects.PingSubject(filters, m.topic, p); m.subject != want {
			t.Errorf("%s stored on %s, want its partition's %s", m.topic, m.subject, want)
		}
	}
	for d := range devices {
		if topic := fmt.Sprintf("devices/dev-%d/telemetry", d); last[topic] != ts0+(perDevice-1)*1000 {
			t.Errorf("%s: last stamp %d, want %d", topic, last[topic], ts0+(perDevice-1)*1000)
		}
	}
}

// TestClusterResendStoredOnce: a tracker that re-sends a ping after a
// reconnect (it had no PUBACK, or lost it) has it stored once: the
// message id comes from its device, stamp and position. Another stamp
// at the same spot is another ping.
func TestClusterResendStoredOnce(t *testing.T) {
	n := startNATSNode(t)
	srv := start(t, clusterConfig(t, n, 2))
	ts := time.Now().Add(-time.Minute).UnixMilli()
	tr := connect5(t, srv.MQTTAddr(), "tracker")
	tr.ping("dev-1", museumLat, museumLon, ts)
	_ = tr.Paho.Disconnect(&paho.Disconnect{ReasonCode: 0})
	again := connect5(t, srv.MQTTAddr(), "tracker-again")
	again.ping("dev-1", museumLat, museumLon, ts)
	again.ping("dev-1", museumLat, museumLon, ts+1000)
	got := readPingStream(t, n.url())
	if len(got) != 2 || got[0].ts != ts || got[1].ts != ts+1000 {
		t.Fatalf("stream holds %+v, want the ping once and the next one", got)
	}
	if d := metric(t, srv, `edgefence_cluster_pings_total{result="duplicate"}`); d != 1 {
		t.Errorf("%v duplicates counted, want 1", d)
	}
}

// TestClusterStreamUnavailable: while NATS is down, a QoS 1 ping gets
// 0x97 (retry later), or no PUBACK over MQTT 3.1.1, and none is
// acknowledged; once NATS is back,
// publishing works again, and the refused pings sent again are stored
// once each (a refused one may have reached the stream as NATS went
// down: acknowledged pings are all stored, stored ones need not all
// have been acknowledged).
func TestClusterStreamUnavailable(t *testing.T) {
	n := startNATSNode(t)
	srv := start(t, clusterConfig(t, n, 2))
	tr := connect5(t, srv.MQTTAddr(), "tracker")
	ts0 := time.Now().Add(-time.Hour).UnixMilli()
	tr.ping("dev-1", museumLat, museumLon, ts0)
	old := dialRaw(t, srv.MQTTAddr(), 4)
	old.mustConnect(mqtttest.ID("tracker-311"), anonymous)
	n.stop()
	// MQTT 3.1.1 has no reason code: no PUBACK, so it is sent again.
	if err := old.publish(1, 1, "devices/dev-2/telemetry", canonical(museumLat, museumLon, ts0)); err != nil {
		t.Fatal(err)
	}
	old.ping("3.1.1 ping with NATS down: no PUBACK before the PINGRESP")
	var refused []int64
	for i := 1; i <= 5; i++ {
		ts := ts0 + int64(i)*1000
		if rc := tr.Publish("devices/dev-1/telemetry", 1, canonical(museumLat, museumLon, ts)); rc != 0x97 {
			t.Fatalf("ping %d with NATS down: PUBACK %#x, want 0x97", i, rc)
		}
		refused = append(refused, ts)
	}
	// The 3.1.1 ping's failure may come after the others': nats.go may
	// have sent it before it saw the server go, and fails it at the reset.
	waitMetric(t, srv, `edgefence_cluster_pings_total{result="failed"}`, float64(len(refused)+1))
	n.start()
	// Sent again until taken, as a tracker does.
	for _, ts := range refused {
		for try := 0; ; try++ {
			rc := tr.Publish("devices/dev-1/telemetry", 1, canonical(museumLat, museumLon, ts))
			if rc == 0 {
				break
			}
			if rc != 0x97 || try == 100 {
				t.Fatalf("ping at %d after NATS came back: PUBACK %#x after %d tries", ts, rc, try)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	var stamps []int64
	for _, m := range readPingStream(t, n.url()) {
		stamps = append(stamps, m.ts)
	}
	want := append([]int64{ts0}, refused...)
	if !slices.Equal(stamps, want) {
		t.Fatalf("stream holds stamps %v, want %v", stamps, want)
	}
}

// TestClusterNeedsReachableNATS: serve --cluster does not start without
// its cluster, and says which.
func TestClusterNeedsReachableNATS(t *testing.T) {
	n := startNATSNode(t)
	cfg := clusterConfig(t, n, 2)
	n.stop()
	_, err := broker.Start(cfg)
	if err == nil || !strings.Contains(err.Error(), "connect to NATS") {
		t.Fatalf("Start without NATS: %v", err)
	}
}

// TestClusterWorkerEqualsSingleBox: an unchanged edgefence worker
// consumes the ping stream serve --cluster fills, and each device of a
// small fleet gets the transitions a single box decides for the same
// pings.
func TestClusterWorkerEqualsSingleBox(t *testing.T) {
	n := startNATSNode(t)
	cfg := clusterConfig(t, n, 2)
	front := start(t, cfg)
	wc := worker.DefaultConfig()
	wc.NATS, wc.MQTT, wc.Name, wc.Fences = n.url(), n.mqtt, "w1", cfg.Fences
	wc.Partitions, wc.Replicas, wc.Lease, wc.CheckpointEvery = 2, 1, 2*time.Second, time.Second
	wc.DedupWindow, wc.PingsMaxAge, wc.HTTPAddr, wc.Log = 2*time.Minute, time.Hour, "", testLog()
	wc.Engine = cfg.Engine
	startWorker(t, wc)
	single := start(t, testConfig(t))
	dash := connect5(t, single.MQTTAddr(), "dash")
	dash.Subscribe("geofence/#")

	// Each device: outside, into the museum island, out, into Alex's
	// circle, out; two fixes a place, a second apart.
	path := [][2]float64{{outLat, outLon}, {museumLat, museumLon}, {outLat, outLon}, {alexLat, alexLon}, {outLat, outLon}}
	const devices = 6
	ts0 := time.Now().Add(-30 * time.Second).UnixMilli()
	toCluster, toSingle := connect5(t, front.MQTTAddr(), "tracker"), connect5(t, single.MQTTAddr(), "tracker")
	for i := range 2 * len(path) {
		for d := range devices {
			pos, dev, ts := path[i/2], fmt.Sprintf("dev-%d", d), ts0+int64(i)*1000
			toCluster.ping(dev, pos[0], pos[1], ts)
			toSingle.ping(dev, pos[0], pos[1], ts)
		}
	}
	want := map[string][]string{}
	for range devices * 4 { // each device enters and leaves two fences
		tr := nextTransition(t, dash, "the single box's transitions")
		want[tr.Device] = append(want[tr.Device], tr.Type+" "+tr.Fence)
	}
	js := jetStream(t, n.url())
	var got map[string][]string
	for try := 0; try < 100; try++ { // the worker follows the stream: up to 20 s
		got = historyByDevice(t, js)
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("worker behind serve --cluster decided\n%v\nthe single box\n%v", got, want)
}

// historyByDevice reads the workers' transition history: each device's
// transitions, "TYPE fence", in order.
func historyByDevice(t *testing.T, js jetstream.JetStream) map[string][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out := map[string][]string{}
	s, err := js.Stream(ctx, subjects.HistoryStream)
	if err != nil {
		return out // not made yet
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("history %d: %v", seq, err)
		}
		if !strings.HasPrefix(m.Header.Get(subjects.HeaderTopic), "geofence/") {
			continue // late and reject reports
		}
		var tr transition
		if err := json.Unmarshal(m.Data, &tr); err != nil {
			t.Fatalf("history %d: %v", seq, err)
		}
		out[tr.Device] = append(out[tr.Device], tr.Type+" "+tr.Fence)
	}
	return out
}

// TestClusterR3LeaderLoss: serve --cluster on a three-node cluster,
// the ping stream R3, its leader shut down mid-stream. A tracker sends
// each ping again until it is acknowledged (0x97 in between, while a new
// leader is elected and serve reconnects): the stream, read on a
// surviving node, holds every ping exactly once, each device's in order.
// (An in-process shutdown, not a kill -9; the worker's process tests
// kill.)
func TestClusterR3LeaderLoss(t *testing.T) {
	srvs := startNATS3(t)
	cfg := testConfig(t)
	cfg.Cluster = &pingstream.Options{NATS: clientURLs(srvs), Name: "serve-1", Partitions: 4, Replicas: 3,
		PingsMaxAge: time.Hour, Timeout: 2 * time.Second}
	srv := start(t, cfg)
	tr := connect5(t, srv.MQTTAddr(), "tracker")
	const devices, perDevice = 5, 60
	ts0 := time.Now().Add(-time.Hour).UnixMilli()
	refused := 0
	for i := range perDevice {
		if i == perDevice/3 {
			leader := pingLeader(t, clientURLs(srvs))
			for _, s := range srvs {
				if s.Name() == leader {
					s.Shutdown()
					s.WaitForShutdown()
				}
			}
			defer func() {
				if now := pingLeader(t, clientURLs(srvs)); now == leader {
					t.Errorf("the leader %s is still the leader", now)
				}
			}()
		}
		for d := range devices {
			body := canonical(museumLat+float64(i)*1e-5, museumLon, ts0+int64(i)*1000)
			for try := 0; ; try++ {
				rc := tr.Publish(fmt.Sprintf("devices/dev-%d/telemetry", d), 1, body)
				if rc == 0 {
					break
				}
				if rc != 0x97 || try == 150 {
					t.Fatalf("ping %d of dev-%d: PUBACK %#x after %d tries", i, d, rc, try)
				}
				refused++
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	t.Logf("%d publishes refused with 0x97 while the leader moved", refused)
	got := readPingStream(t, clientURLs(srvs))
	seen := map[string][]int64{}
	for _, m := range got {
		seen[m.topic] = append(seen[m.topic], m.ts)
	}
	for d := range devices {
		topic := fmt.Sprintf("devices/dev-%d/telemetry", d)
		var want []int64
		for i := range perDevice {
			want = append(want, ts0+int64(i)*1000)
		}
		if !slices.Equal(seen[topic], want) {
			t.Errorf("%s: stream holds %d pings %v, want each of %d once, in order", topic, len(seen[topic]), seen[topic], perDevice)
		}
	}
}

// jetStream is the test's own JetStream client of urls, closed when the
// test ends.
func jetStream(t *testing.T, urls string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(urls)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	return js
}

// pingLeader returns the name of the ping stream's leader.
func pingLeader(t *testing.T, urls string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := jetStream(t, urls).Stream(ctx, subjects.PingStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.Cluster == nil || info.Cluster.Leader == "" {
		t.Fatalf("ping stream leader: %v %+v", err, info)
	}
	return info.Cluster.Leader
}

// startWorker starts an edgefence worker in the test's process and
// closes it (its partitions handed over) when the test ends.
func startWorker(t *testing.T, wc worker.Config) *worker.Worker {
	t.Helper()
	w, err := worker.Start(wc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := w.Close(ctx); err != nil {
			t.Errorf("worker close: %v", err)
		}
	})
	return w
}
