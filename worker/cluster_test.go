package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/natstest"
	"github.com/edgefence/edgefence/internal/syncbuf"
	"github.com/edgefence/edgefence/output"
	"github.com/edgefence/edgefence/worker/checkpoint"
	"github.com/edgefence/edgefence/worker/subjects"
)

// testFences are three stripes the simulated devices drive across
// eastward: a device crosses an edge every few seconds, and stays in
// "a" and "b" past their dwell.
const testFences = `{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"a","properties":{"dwell":2},"geometry":{"type":"Polygon","coordinates":[[[13.4010,52.4],[13.4040,52.4],[13.4040,52.7],[13.4010,52.7],[13.4010,52.4]]]}},
 {"type":"Feature","id":"b","properties":{"dwell":1},"geometry":{"type":"Polygon","coordinates":[[[13.4050,52.4],[13.4070,52.4],[13.4070,52.7],[13.4050,52.7],[13.4050,52.4]]]}},
 {"type":"Feature","id":"c","properties":{"dwell":0},"geometry":{"type":"Polygon","coordinates":[[[13.4085,52.4],[13.4100,52.4],[13.4100,52.7],[13.4085,52.7],[13.4085,52.4]]]}}
]}`

// proc is a process the test started: a NATS node or a worker.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan struct{}
}

func startProc(t *testing.T, name, role, arg string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), roleEnv+"="+role, "EDGEFENCE_WORKER_TEST_ARG="+arg)
	return launch(t, name, cmd)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// startNATSNode starts a NATS node process (natsServer) from its configuration file.
func startNATSNode(t *testing.T, name, conf string) *proc {
	t.Helper()
	return launch(t, name, exec.Command(natsServer(t), "-c", conf))
}

// kill is kill -9.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop is SIGTERM, and waits.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not stop on SIGTERM", p.name)
	}
}

// freePort picks a port free now, which another process may take before
// the child binds it ("address already in use"): startCluster retries on
// it, for the one port NATS must know before it starts.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// natsListening matches the lines a NATS server logs for the listeners
// it bound: "Listening for client connections on 127.0.0.1:41234", "…
// route connections on …", "… MQTT clients on mqtt://…".
var natsListening = regexp.MustCompile(`Listening for (client connections|route connections|MQTT clients) on (?:mqtt://)?127\.0\.0\.1:(\d+)\n`)

// boundPorts waits until node p has logged all three of its listeners (a
// node whose cluster port is taken logs the other two first, then exits)
// and returns its client and MQTT ports; ok is false if it exited first.
func boundPorts(t *testing.T, p *proc) (client, mqtt int, ok bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ports := map[string]int{}
		for _, m := range natsListening.FindAllStringSubmatch(p.out.String(), -1) {
			ports[m[1]], _ = strconv.Atoi(m[2])
		}
		if len(ports) == 3 {
			return ports["client connections"], ports["MQTT clients"], true
		}
		select {
		case <-p.done:
			return 0, 0, false
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not log its listeners within 60s:\n%s", p.name, p.out)
		}
	}
}

// node is one NATS server of the test cluster.
type node struct {
	*proc
	client, mqtt int
	conf         string // its configuration file, for a restart
}

func (n *node) url() string      { return fmt.Sprintf("nats://127.0.0.1:%d", n.client) }
func (n *node) mqttAddr() string { return fmt.Sprintf("127.0.0.1:%d", n.mqtt) }

// startCluster starts three NATS servers with JetStream and MQTT on
// loopback, the telemetry subjects mapped onto p partitions.
func startCluster(t *testing.T, p int) []*node {
	t.Helper()
	dir := t.TempDir()
	nodes := make([]*node, 3)
	var maps []string
	for from, to := range subjects.PartitionMappings(p) {
		maps = append(maps, strconv.Quote(from)+": "+strconv.Quote(to))
	}
	// Every listener binds port -1 (any free port) and the test reads the
	// ports from the node's log, so that no other process can take one
	// between a pick and the bind; but for the first node's cluster port:
	// JetStream wants configured routes, and the seed can only name its
	// own cluster address before it starts. That port is picked, and the
	// node started again on a fresh one if it was taken (3 times at most).
	// The others route to the seed; the full mesh follows by gossip.
	var seed string
	for i := range nodes {
		for attempt := 1; ; attempt++ {
			listen := "127.0.0.1:-1"
			if i == 0 {
				listen = fmt.Sprintf("127.0.0.1:%d", freePort(t))
				seed = "nats-route://" + listen
			}
			conf := fmt.Sprintf(`server_name: n%d
logtime: true
logtime_utc: true
listen: 127.0.0.1:-1
http: 127.0.0.1:-1
jetstream { store_dir: %q }
cluster { name: edgefence, listen: %s, routes: [%s] }
mqtt { listen: 127.0.0.1:-1, stream_replicas: 3 }
mappings = { %s }
`, i+1, filepath.Join(dir, fmt.Sprint(i+1)), listen, seed, strings.Join(maps, ", "))
			path := filepath.Join(dir, fmt.Sprintf("n%d.conf", i+1))
			if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			n := &node{proc: startNATSNode(t, fmt.Sprintf("nats-%d", i+1), path), conf: path}
			var ok bool
			if n.client, n.mqtt, ok = boundPorts(t, n.proc); ok {
				nodes[i] = n
				break
			}
			if i > 0 || attempt == 3 || !strings.Contains(n.out.String(), "address already in use") {
				t.Fatalf("%s exited before listening:\n%s", n.name, n.out)
			}
			t.Logf("%s: its cluster port was taken before it bound it; starting it again on another", n.name)
		}
	}
	// Ready when JetStream has a meta leader: a stream can be created.
	nc := connect(t, nodes[0].url())
	js, _ := jetstream.New(nc)
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "READY", Subjects: []string{"ready"}, Replicas: 3})
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not ready: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nodes
}

// workerCluster is a test cluster ready for worker processes: its nodes,
// the URLs a client fails over between, and the fences the workers load.
type workerCluster struct {
	t         *testing.T
	nodes     []*node
	urls      string
	fencePath string
	set       *fence.Set // the workers' fences, for the reference engine
	p         int
	lease     time.Duration
}

// startWorkerCluster starts a cluster of p partitions (startCluster) and
// writes testFences for its workers, whose leases last lease.
func startWorkerCluster(t *testing.T, p int, lease time.Duration) *workerCluster {
	t.Helper()
	nodes := startCluster(t, p)
	fencePath := filepath.Join(t.TempDir(), "fences.geojson")
	if err := os.WriteFile(fencePath, []byte(testFences), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err := fence.Parse([]byte(testFences))
	if err != nil {
		t.Fatal(err)
	}
	return &workerCluster{
		t:         t,
		nodes:     nodes,
		urls:      nodes[0].url() + "," + nodes[1].url() + "," + nodes[2].url(),
		fencePath: fencePath,
		set:       set,
		p:         p,
		lease:     lease,
	}
}

// startWorker starts a worker process named name that takes its pings over
// MQTT from the first two nodes and checkpoints every second.
func (c *workerCluster) startWorker(name string) *proc {
	arg, _ := json.Marshal(workerArgs{
		NATS: c.urls, MQTT: c.nodes[0].mqttAddr() + "," + c.nodes[1].mqttAddr(), Name: name, Fences: c.fencePath,
		Partitions: c.p, Lease: c.lease, Checkpoint: time.Second,
	})
	return startProc(c.t, name, "worker", string(arg))
}

// dashboard subscribes a dashboard to the transitions and the late
// reports on the second node.
func (c *workerCluster) dashboard() *dashboard {
	dash := &dashboard{}
	dc := mqttClient(c.t, "dashboard", c.nodes[1].mqttAddr())
	if tok := dc.SubscribeMultiple(map[string]byte{"geofence/#": 1, "edgefence/late/#": 1}, dash.handle); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		c.t.Fatalf("subscribe: %v", tok.Error())
	}
	return dash
}

func connect(t *testing.T, urls string) *nats.Conn {
	t.Helper()
	var nc *nats.Conn
	var err error
	for range 100 {
		if nc, err = nats.Connect(urls, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond)); err == nil {
			t.Cleanup(nc.Close)
			return nc
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("connect %s: %v", urls, err)
	return nil
}

func mqttClient(t *testing.T, id, addr string) mqtt.Client {
	t.Helper()
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker("tcp://" + addr).SetClientID(id).
		SetCleanSession(true).SetAutoReconnect(true).SetConnectRetry(true).SetConnectRetryInterval(100 * time.Millisecond))
	if tok := c.Connect(); !tok.WaitTimeout(20*time.Second) || tok.Error() != nil {
		t.Fatalf("mqtt connect %s: %v", addr, tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(100) })
	return c
}

// received is what a dashboard got over MQTT.
type received struct {
	topic string
	body  string
}

// dashboard subscribes to transitions and late pings and keeps them,
// with the time each arrived.
type dashboard struct {
	mu  sync.Mutex
	got []received
	at  []time.Time
}

func (d *dashboard) handle(_ mqtt.Client, m mqtt.Message) {
	d.mu.Lock()
	d.got = append(d.got, received{m.Topic(), string(m.Payload())})
	d.at = append(d.at, time.Now())
	d.mu.Unlock()
}

// times returns when each of all's messages arrived.
func (d *dashboard) times() []time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.at)
}

func (d *dashboard) all() []received {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.got)
}

// fleet publishes devices' pings, one round a second: each device
// drives east across the stripes, its clock 3 s ahead, 1 s behind or
// right, and every tenth ping of a device is held back and sent after
// the next one (over the hold: a late ping its history places). Even
// devices go over MQTT at QoS 1 through four gateway connections; odd
// ones, when js is set, over NATS with JetStream's acknowledgement and
// a de-duplication id, sent again until the ping stream has them (a
// gateway that speaks NATS).
type fleet struct {
	conns   []mqtt.Client
	js      jetstream.JetStream
	devices int
	held    map[int]fleetPing
	acked   map[string]bool // subject and body of each acknowledged ping: over NATS?
}

// fleetPing is a ping's body and its de-duplication id: the device and
// its stamp.
type fleetPing struct{ body, id string }

// overNATS reports whether device i publishes over NATS.
func (f *fleet) overNATS(i int) bool { return f.js != nil && i%2 == 1 }

func (f *fleet) round(t *testing.T, r int) {
	t.Helper()
	now := time.Now()
	var toks []mqtt.Token
	var pending []string // the acknowledgements awaited, subject and body
	var sent []*nats.Msg
	var futs []jetstream.PubAckFuture
	publish := func(i int, pg fleetPing) {
		body := pg.body
		topic := fmt.Sprintf("devices/dev-%04d/telemetry", i)
		subject := strings.ReplaceAll(topic, "/", ".")
		if !f.overNATS(i) {
			toks = append(toks, f.conns[(i/2)%len(f.conns)].Publish(topic, 1, false, body))
			pending = append(pending, subject+" "+body)
			return
		}
		m := nats.NewMsg(subject)
		m.Data = []byte(body)
		m.Header.Set(jetstream.MsgIDHeader, pg.id)
		fut, err := f.js.PublishMsgAsync(m)
		if err != nil {
			fut = nil // published again, alone, below
		}
		sent, futs = append(sent, m), append(futs, fut)
	}
	for i := range f.devices {
		off := []time.Duration{3 * time.Second, -time.Second, 0, 0, 0}[i%5]
		lon := 13.4000 + float64((i*7+r*4)%130)*0.0001
		lat := 52.45 + float64(i%1000)*0.0002
		ts := now.Add(off).UnixMilli()
		pg := fleetPing{fmt.Sprintf(`{"lat":%.5f,"lon":%.5f,"ts":%d}`, lat, lon, ts), fmt.Sprintf("dev-%04d|%d", i, ts)}
		if (r+i)%10 == 3 {
			f.held[i] = pg
			continue
		}
		publish(i, pg)
		if h, ok := f.held[i]; ok {
			delete(f.held, i)
			publish(i, h)
		}
	}
	for k, tok := range toks {
		if !tok.WaitTimeout(20*time.Second) || tok.Error() != nil {
			t.Fatalf("publish: %v", tok.Error())
		}
		f.acked[pending[k]] = false
	}
	for k, fut := range futs {
		var err error
		if fut != nil {
			select {
			case <-fut.Ok():
				f.acked[sent[k].Subject+" "+string(sent[k].Data)] = true
				continue
			case err = <-fut.Err():
			case <-time.After(20 * time.Second):
				err = errors.New("no acknowledgement in 20 s")
			}
		}
		// While the stream elects a leader a publish fails or goes
		// unanswered; the de-duplication id makes sending again safe.
		deadline := time.Now().Add(time.Minute)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err2 := f.js.PublishMsg(ctx, sent[k])
			cancel()
			if err2 == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("publish over NATS: %v, then %v", err, err2)
			}
			time.Sleep(200 * time.Millisecond)
		}
		f.acked[sent[k].Subject+" "+string(sent[k].Data)] = true
	}
}

// waitQuiet returns once the history stream has not grown for quiet.
func waitQuiet(t *testing.T, js jetstream.JetStream, quiet time.Duration) {
	t.Helper()
	var last uint64
	since := time.Now()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		s, err := js.Stream(ctx, subjects.HistoryStream)
		var n uint64
		if err == nil {
			if info, err := s.Info(ctx); err == nil {
				n = info.State.Msgs
			}
		}
		cancel()
		if n != last {
			last, since = n, time.Now()
		}
		if time.Since(since) >= quiet {
			return
		}
	}
	t.Fatal("the history stream never went quiet")
}

// owners returns partition → owner from the lease bucket.
func owners(js jetstream.JetStream) map[int]string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, subjects.LeaseBucket)
	if err != nil {
		return nil
	}
	out := map[int]string{}
	kl, err := kv.ListKeys(ctx)
	if err != nil {
		return nil
	}
	for k := range kl.Keys() {
		if n, ok := strings.CutPrefix(k, "p."); ok {
			if e, err := kv.Get(ctx, k); err == nil {
				i, _ := strconv.Atoi(n)
				out[i] = string(e.Value())
			}
		}
	}
	return out
}

// waitOwned waits until every partition is owned by one of names and
// returns how long that took.
func waitOwned(t *testing.T, js jetstream.JetStream, p int, names ...string) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < time.Minute {
		o := owners(js)
		ok := len(o) == p
		for _, w := range o {
			ok = ok && slices.Contains(names, w)
		}
		if ok {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("partitions not owned by %v within a minute: %v", names, owners(js))
	return 0
}

// streamMsg is a message of the ping stream as the reference reads it.
type streamMsg struct {
	seq     uint64
	part    int
	subject string
	data    []byte
	ts      int64
}

// readStream reads a whole stream, retrying while the cluster answers
// "no responders" (a leader being elected after the node was killed).
func readStream(t *testing.T, js jetstream.JetStream, name string) []jetstream.Msg {
	t.Helper()
	var err error
	for range 20 {
		var out []jetstream.Msg
		if out, err = readOnce(js, name); err == nil {
			return out
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("read %s: %v", name, err)
	return nil
}

func readOnce(js jetstream.JetStream, name string) ([]jetstream.Msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	c, err := js.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, err
	}
	var out []jetstream.Msg
	for len(out) < int(info.State.Msgs) {
		b, err := c.Fetch(1000, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return nil, err
		}
		for m := range b.Messages() {
			out = append(out, m)
		}
		if err := b.Error(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readPings reads the whole ping stream.
func readPings(t *testing.T, js jetstream.JetStream) []streamMsg {
	t.Helper()
	var out []streamMsg
	for _, m := range readStream(t, js, subjects.PingStream) {
		md, _ := m.Metadata()
		rest := strings.TrimPrefix(m.Subject(), subjects.PingSubjectPrefix)
		part, _ := strconv.Atoi(rest[:strings.IndexByte(rest, '.')])
		out = append(out, streamMsg{md.Sequence.Stream, part, m.Subject(), m.Data(), md.Timestamp.UnixNano()})
	}
	return out
}

// refSink keeps a reference run's output as a dashboard would receive it.
type refSink struct {
	out   []received
	trans []engine.Transition
}

func (r *refSink) Transition(tr *engine.Transition) {
	r.out = append(r.out, received{output.TransitionTopic("geofence", tr.Fence, tr.Device), string(output.TransitionJSON(tr, tr.Decided))})
	r.trans = append(r.trans, *tr)
}

func (r *refSink) Late(l *engine.Late) {
	r.out = append(r.out, received{output.LateTopic("edgefence/late", l.Ping.Device), string(output.LateJSON(l))})
}

// reference runs msgs through one Processor as a single box does: each
// message at its stream timestamp (never before the one before), a tick
// advancing time and sweeping.
func reference(t *testing.T, set *fence.Set, msgs []streamMsg) *refSink {
	t.Helper()
	var sink refSink
	cfg := engineConfig()
	proc, err := evaluator.NewProcessor(cfg, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), func() *fence.Set { return set }, &sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	reader := ingest.NewReader(ingest.DefaultFilters(), nil, nil, ingest.NewMetrics(metrics.NewSet()), slog.Default(), 4096)
	var clock int64
	for _, m := range msgs {
		clock = max(clock, m.ts)
		now := time.Unix(0, clock)
		proc.AdvanceThrough(now)
		rest := strings.TrimPrefix(m.subject, subjects.PingSubjectPrefix)
		rest = rest[strings.IndexByte(rest, '.')+1:]
		if rest == "_tick" {
			proc.Sweep(now)
			continue
		}
		id, pos, _, outcome := reader.ReadAt(strings.ReplaceAll(rest, ".", "/"), m.data, "ref", now)
		if outcome != ingest.Accepted {
			t.Fatalf("reference: ping %d on %s not accepted", m.seq, m.subject)
		}
		pg := engine.NewPing(cfg.Clamper(), id, &pos, now)
		proc.Ingest(&pg)
		proc.Advance(now)
	}
	return &sink
}

// byDevice groups received messages by the device (the topic's last
// level), keeping their order.
func byDevice(rs []received) map[string][]received {
	out := map[string][]received{}
	for _, r := range rs {
		dev := r.topic[strings.LastIndexByte(r.topic, '/')+1:]
		out[dev] = append(out[dev], r)
	}
	return out
}

// projection is a transition without the instants the single box
// decides at (decided_time differs between a box and a partition).
func projection(trs []engine.Transition, historic bool) map[string][]string {
	out := map[string][]string{}
	for _, tr := range trs {
		s := fmt.Sprintf("%s %s %d", tr.Fence, tr.Type, tr.Event)
		if historic {
			s += fmt.Sprintf(" h=%v", tr.Historic)
		}
		out[tr.Device] = append(out[tr.Device], s)
	}
	return out
}

// setOf sorts each device's messages and drops repeats.
func setOf(m map[string][]received) map[string][]received {
	out := map[string][]received{}
	for dev, rs := range m {
		rs = slices.Clone(rs)
		slices.SortFunc(rs, func(a, b received) int { return strings.Compare(a.topic+a.body, b.topic+b.body) })
		out[dev] = slices.Compact(rs)
	}
	return out
}

// unionKeys returns the keys of a and b, sorted, each once.
func unionKeys[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

func diffDevices(t *testing.T, what string, got, want map[string][]received) {
	t.Helper()
	bad := 0
	keys := unionKeys(got, want)
	for _, k := range keys {
		if !slices.Equal(got[k], want[k]) {
			bad++
			if bad <= 3 {
				g, w := got[k], want[k]
				i := 0
				for i < len(g) && i < len(w) && g[i] == w[i] {
					i++
				}
				t.Errorf("%s: device %s: %d messages, want %d; from the %dth on:\n got  %v\n want %v",
					what, k, len(g), len(w), i+1, g[i:min(i+3, len(g))], w[i:min(i+3, len(w))])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d devices differ", what, bad, len(keys))
	}
}

// TestClusterEqualsSingleBox is the scale-out guarantee: devices over
// MQTT and over NATS into a three-node NATS cluster, three workers, one
// killed with kill -9 mid-stream, a fourth worker added: the dashboards
// get exactly what one engine fed the same stream decides, nothing
// lost, nothing twice, in order per device; so does the history stream.
//
// With EDGEFENCE_CLUSTER_NODE_KILL=1 the NATS node leading the streams
// is killed too (CI runs it as a step of its own). What the workers and
// JetStream answer for is asserted as before: every ping acknowledged
// over NATS in the stream once, the transitions decided, the history
// stream, and the dashboard's messages outside the 10 s after the death.
// What NATS's MQTT side then loses is logged: QoS 1 pings it
// acknowledged and never captured in the ping stream, retained states
// left older than the newest, live messages out of order or twice
// (docs/scale-out.md).
func TestClusterEqualsSingleBox(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS cluster and four worker processes")
	}
	devices, rounds := 300, 16
	if s := os.Getenv("EDGEFENCE_CLUSTER_DEVICES"); s != "" {
		devices, _ = strconv.Atoi(s)
	}
	killNode := os.Getenv("EDGEFENCE_CLUSTER_NODE_KILL") == "1"
	const p = 8
	lease := 3 * time.Second
	c := startWorkerCluster(t, p, lease)
	nodes, set := c.nodes, c.set
	workers := map[string]*proc{}
	for _, name := range []string{"w1", "w2", "w3"} {
		workers[name] = c.startWorker(name)
	}
	nc := connect(t, c.urls)
	js, _ := jetstream.New(nc)
	waitOwned(t, js, p, "w1", "w2", "w3")

	dash := c.dashboard()
	gw, _ := jetstream.New(connect(t, nodes[0].url()))
	fl := &fleet{devices: devices, held: map[int]fleetPing{}, js: gw, acked: map[string]bool{}}
	for i := range 4 {
		fl.conns = append(fl.conns, mqttClient(t, fmt.Sprintf("gateway-%d", i), nodes[0].mqttAddr()))
	}

	var failover time.Duration
	var nodeKilledAt time.Time
	failoverDone := make(chan struct{})
	for r := range rounds {
		start := time.Now()
		fl.round(t, r)
		switch r {
		case 3:
			victim := owners(js)[0] // a worker that owns partitions
			t.Logf("kill -9 worker %s, owner of %d partitions", victim, countOwned(owners(js), victim))
			workers[victim].kill()
			delete(workers, victim)
			killedAt := time.Now()
			go func() {
				defer close(failoverDone)
				for time.Since(killedAt) < time.Minute {
					o := owners(js)
					ok := len(o) == p
					for _, w := range o {
						ok = ok && w != victim
					}
					if ok {
						failover = time.Since(killedAt)
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			}()
		case 7:
			if killNode {
				// The worst case: node 3 leads what the death of a leader
				// interrupts, the streams pings, transitions and retained
				// messages go to, the retained bucket and the leases.
				for _, s := range []string{subjects.PingStream, subjects.HistoryStream, "$MQTT_rmsgs", "$MQTT_msgs", "KV_" + subjects.RetainedBucket, "KV_" + subjects.LeaseBucket} {
					leadOn(t, nc, js, s, "n3")
				}
			}
		case 8:
			if killNode {
				t.Log("kill -9 NATS node 3")
				nodes[2].kill()
				nodeKilledAt = time.Now()
			}
		case 11:
			t.Log("start worker w4")
			workers["w4"] = c.startWorker("w4")
		}
		time.Sleep(time.Second - time.Since(start))
	}
	<-failoverDone
	waitOwned(t, js, p, slices.Collect(maps.Keys(workers))...)
	waitQuiet(t, js, 5*time.Second)
	for _, w := range workers {
		w.stop(t)
	}

	msgs := readPings(t, js)
	applied, perPart := appliedPings(t, js, p, msgs)
	// Every ping the trackers were told is taken must be in the stream.
	copies := streamCopies(msgs)
	var lost, twice [2]int // over MQTT, over NATS
	for k, overNATS := range fl.acked {
		i := 0
		if overNATS {
			i = 1
		}
		switch n := copies[k]; {
		case n == 0:
			lost[i]++
		case n > 1:
			twice[i]++
		}
	}
	t.Logf("pings: %d acknowledged; over MQTT (QoS 1) %d lost before the ping stream and %d in it more than once; over NATS %d lost, %d more than once",
		len(fl.acked), lost[0], twice[0], lost[1], twice[1])
	if lost[1] > 0 || twice[1] > 0 {
		t.Errorf("over NATS: %d acknowledged pings lost, %d in the stream more than once; want none", lost[1], twice[1])
	}
	// A NATS node's death loses pings NATS's MQTT side acknowledged: it
	// acknowledges a QoS 1 publish once its own stream has it, and the
	// ping stream's copy is a plain publish, dropped while that stream
	// elects a leader (docs/scale-out.md). Not ours to mend: logged.
	if !killNode && (lost[0] > 0 || twice[0] > 0) {
		t.Errorf("over MQTT with every NATS node up: %d acknowledged pings lost, %d in the stream more than once; want none", lost[0], twice[0])
	}
	if len(applied) < len(msgs)*9/10 {
		t.Fatalf("the workers applied only %d of %d stream messages", len(applied), len(msgs))
	}
	// The stream as each partition's owners had to see it.
	var want []received
	var wantTrans []engine.Transition
	for n := range p {
		r := reference(t, set, perPart[n])
		want = append(want, r.out...)
		wantTrans = append(wantTrans, r.trans...)
	}
	dashGot, repeats := collapseRepeats(dash.all())
	t.Logf("%d devices, %d stream messages (%d applied), %d transitions and late pings expected, %d received by the dashboard and %d times right again",
		devices, len(msgs), len(applied), len(want), len(dashGot), repeats)
	if len(want) == 0 {
		t.Fatal("no transitions: the test drives nothing")
	}
	// Live over MQTT: every transition and late ping, nothing else. Order
	// and repeats are counted, not asserted: a NATS node dying makes NATS
	// MQTT redeliver, at QoS 1, what its subscribers or publishers had in
	// flight there, at times after later messages (docs/scale-out.md).
	// Decided while the cluster was electing new leaders, a live message
	// was seen lost once in several runs (the history and the retained
	// store had it): those are counted, everything else must be there.
	// The window opens 3 s before the kill: NATS MQTT had not yet stored
	// what it was given 2 s before its node died in one run out of several
	// (72 messages decided 2 s before; issue 34, NATS's MQTT side storing
	// seconds late, is why serve --cluster replaces it).
	inWindow := func(r received) bool {
		i := strings.Index(r.body, `"decided_time":"`)
		if i < 0 {
			return false
		}
		at, err := time.Parse(time.RFC3339Nano, r.body[i+16:i+16+strings.IndexByte(r.body[i+16:], '"')])
		return err == nil && at.After(nodeKilledAt.Add(-3*time.Second)) && at.Before(nodeKilledAt.Add(10*time.Second))
	}
	gotDash, wantDash := byDevice(dashGot), byDevice(want)
	outside := func(m map[string][]received) map[string][]received {
		out := map[string][]received{}
		for dev, rs := range m {
			for _, r := range rs {
				if !inWindow(r) {
					out[dev] = append(out[dev], r)
				}
			}
		}
		return out
	}
	diffDevices(t, "dashboard over MQTT (as a set, outside the node failure)", setOf(outside(gotDash)), setOf(outside(wantDash)))
	missing := 0
	gotSet := setOf(gotDash)
	for dev, rs := range setOf(wantDash) {
		for _, r := range rs {
			if _, ok := slices.BinarySearchFunc(gotSet[dev], r, func(a, b received) int { return strings.Compare(a.topic+a.body, b.topic+b.body) }); !ok {
				missing++
			}
		}
	}
	t.Logf("dashboard: %d live messages decided within 10 s of the NATS node's death missing", missing)
	reordered := 0
	for dev, w := range wantDash {
		if !slices.Equal(gotDash[dev], w) {
			reordered++
		}
	}
	t.Logf("dashboard: %d of %d devices received out of order", reordered, len(wantDash))
	if !killNode && (reordered > 0 || repeats > 0 || missing > 0) {
		// Only a NATS node's death makes its MQTT side redeliver or lose.
		t.Errorf("with every NATS node up: %d devices out of order, %d repeats, %d missing; want none", reordered, repeats, missing)
	}
	diffDevices(t, "history stream", byDevice(readHistory(t, js)), byDevice(want))

	// A dashboard that connects now gets each device's current state per
	// fence, retained on the NATS nodes.
	wantRetained := map[string]string{}
	for _, r := range want {
		if strings.HasPrefix(r.topic, "geofence/") && !strings.Contains(r.body, `"historic":true`) {
			wantRetained[r.topic] = r.body
		}
	}
	// The NATS nodes' retained store holds each device's current state
	// per fence: what a dashboard that connects late is sent.
	rs, err := js.Stream(context.Background(), "$MQTT_rmsgs")
	if err != nil {
		t.Fatal(err)
	}
	// With a NATS node killed, NATS was seen to keep an older transition
	// than the newest on a few topics, though it had acknowledged the
	// newer one and stored it first. The worker sends again what NATS
	// acknowledged without storing; a store NATS applies late is out of
	// its sight: logged, not asserted (docs/scale-out.md).
	report := t.Errorf
	if killNode {
		report = t.Logf
	}
	bad := 0
	for topic, w := range wantRetained {
		var m *jetstream.RawStreamMsg
		for range 5 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			m, err = rs.GetLastMsgForSubject(ctx, "$MQTT.rmsgs."+strings.ReplaceAll(topic, "/", "."))
			cancel()
			if err == nil || errors.Is(err, jetstream.ErrMsgNotFound) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil || string(m.Data) != w {
			if bad++; bad <= 3 {
				got := ""
				if m != nil {
					got = string(m.Data)
				}
				report("retained %s: %v\n got  %s\n want %s", topic, err, got, w)
			}
		}
	}
	if bad > 0 {
		report("retained store: %d of %d topics differ", bad, len(wantRetained))
	}
	// The retained bucket, which serve --cluster nodes follow, holds
	// exactly that, whatever was killed: asserted.
	inBucket := bucketState(t, js)
	bad = 0
	for topic, w := range wantRetained {
		if got := inBucket[topic]; got != w {
			if bad++; bad <= 3 {
				t.Errorf("retained bucket %s:\n got  %s\n want %s", topic, got, w)
			}
		}
	}
	for topic := range inBucket {
		if _, ok := wantRetained[topic]; !ok {
			t.Errorf("retained bucket holds %s, which no transition retained", topic)
		}
	}
	if bad > 0 {
		t.Errorf("retained bucket: %d of %d topics differ", bad, len(wantRetained))
	}
	// And a dashboard connecting now is sent them. NATS 2.15.3 served a
	// late subscription all, none or part of them after a node was lost
	// (docs/scale-out.md): logged, not asserted.
	for i, n := range nodes[:2] {
		got := retainedState(t, n.mqttAddr())
		t.Logf("a late dashboard on node %d: %d retained messages, the store has %d; equal: %v", i+1, len(got), len(wantRetained), maps.Equal(got, wantRetained))
	}

	singleBoxEqual(t, set, applied, wantTrans)
	t.Logf("failover: partitions owned again %v after the kill -9 (lease %v)", failover, lease)
}

// leadOn makes server the leader of stream's replicas, if it can within
// a few seconds; it logs where the leader is.
func leadOn(t *testing.T, nc *nats.Conn, js jetstream.JetStream, stream, server string) {
	t.Helper()
	leader := ""
	for range 20 {
		var err error
		if leader, err = natstest.Leader(js, stream); err == nil && leader != "" {
			if leader == server {
				break
			}
			req := fmt.Sprintf(`{"placement":{"preferred":%q}}`, server)
			if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, []byte(req), 2*time.Second); err != nil {
				t.Logf("%s: leader step-down: %v", stream, err)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("%s: leader %s", stream, leader)
}

func countOwned(o map[int]string, name string) int {
	n := 0
	for _, w := range o {
		if w == name {
			n++
		}
	}
	return n
}

// collapseRepeats drops a message received again right after itself
// (per device): MQTT QoS 1 is at least once, and a NATS node dying
// redelivers what its subscribers had not acknowledged, or a publisher's
// PUBACK was lost with it (docs/scale-out.md). It returns what is left
// and how many it dropped.
func collapseRepeats(rs []received) ([]received, int) {
	last := map[string]received{}
	var out []received
	n := 0
	for _, r := range rs {
		dev := r.topic[strings.LastIndexByte(r.topic, '/')+1:]
		if p, ok := last[dev]; ok && p == r {
			n++
			continue
		}
		last[dev] = r
		out = append(out, r)
	}
	return out, n
}

// retainedState returns what a dashboard connecting now is sent.
func retainedState(t *testing.T, addr string) map[string]string {
	t.Helper()
	var mu sync.Mutex
	got := map[string]string{}
	lastAt := time.Now()
	c := mqttClient(t, fmt.Sprintf("late-dashboard-%d", time.Now().UnixNano()), addr)
	tok := c.Subscribe("geofence/#", 1, func(_ mqtt.Client, m mqtt.Message) {
		mu.Lock()
		defer mu.Unlock()
		if !m.Retained() {
			t.Errorf("late dashboard: a live message on %s", m.Topic())
		}
		got[m.Topic()] = string(m.Payload())
		lastAt = time.Now()
	})
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}
	for {
		time.Sleep(250 * time.Millisecond)
		mu.Lock()
		quiet := time.Since(lastAt) > 2*time.Second
		mu.Unlock()
		if quiet {
			break
		}
	}
	c.Disconnect(100) // before the node may go: no reconnecting left behind
	mu.Lock()
	defer mu.Unlock()
	return maps.Clone(got)
}

// bucketState reads the retained bucket: topic → current value.
func bucketState(t *testing.T, js jetstream.JetStream) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, subjects.RetainedBucket)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	kl, err := kv.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k := range kl.Keys() {
		topic, err := subjects.RetainedTopic(k)
		if err != nil {
			t.Errorf("retained bucket key %q: %v", k, err)
			continue
		}
		e, err := kv.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			continue // deleted
		}
		if err != nil {
			t.Fatalf("retained bucket %s: %v", k, err)
		}
		out[topic] = string(e.Value())
	}
	return out
}

// readHistory reads the transition history stream.
func readHistory(t *testing.T, js jetstream.JetStream) []received {
	t.Helper()
	var out []received
	for _, m := range readStream(t, js, subjects.HistoryStream) {
		out = append(out, received{m.Headers().Get(subjects.HeaderTopic), string(m.Data())})
	}
	return out
}

// appliedPings returns the messages of msgs (the ping stream) that the
// partitions' checkpoints say were applied, all and per partition: read
// after the evaluating processes stopped, each saving its last.
func appliedPings(t *testing.T, js jetstream.JetStream, p int, msgs []streamMsg) ([]streamMsg, map[int][]streamMsg) {
	t.Helper()
	ckpt := map[int]uint64{}
	for n := range p {
		var seq uint64
		var err error
		for range 20 { // the cluster may still be electing leaders
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			seq, err = checkpoint.Seq(ctx, js, n)
			cancel()
			if err == nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		ckpt[n] = seq
	}
	var applied []streamMsg
	perPart := map[int][]streamMsg{}
	last := map[int]uint64{}
	for _, m := range msgs {
		last[m.part] = m.seq
		if m.seq <= ckpt[m.part] {
			applied = append(applied, m)
			perPart[m.part] = append(perPart[m.part], m)
		}
	}
	t.Logf("checkpoints %v, last messages %v", ckpt, last)
	return applied, perPart
}

// streamCopies counts the ping stream's copies of each ping, keyed by its
// subject without the partition prefix and its body.
func streamCopies(msgs []streamMsg) map[string]int {
	copies := map[string]int{}
	for _, m := range msgs {
		rest := strings.TrimPrefix(m.subject, subjects.PingSubjectPrefix)
		copies[rest[strings.IndexByte(rest, '.')+1:]+" "+string(m.data)]++
	}
	return copies
}

// singleBoxEqual checks that every device's transitions, decided by the
// partitions' engines (wantTrans), equal those of one engine over the
// whole of applied, as a single box.
func singleBoxEqual(t *testing.T, set *fence.Set, applied []streamMsg, wantTrans []engine.Transition) {
	t.Helper()
	// One engine over the whole stream, as a single box. It advances its
	// clock at every partition's messages and sweeps at every partition's
	// tick, each partition's engine at its own: what they decide does not
	// depend on how often time is advanced (AdvanceThrough) or swept (a
	// DWELL timer is a deadline of its own), so every device gets the same
	// transitions, historic flags included. docs/scale-out.md.
	single := reference(t, set, applied)
	got, exp := projection(wantTrans, true), projection(single.trans, true)
	differ := 0
	devs := unionKeys(got, exp)
	for _, dev := range devs {
		if !slices.Equal(got[dev], exp[dev]) {
			if differ++; differ <= 3 {
				t.Errorf("device %s: partitioned %v, single box %v", dev, got[dev], exp[dev])
			}
		}
	}
	if differ > 0 {
		t.Errorf("single box: %d transitions, partitioned %d; %d of %d devices differ", len(single.trans), len(wantTrans), differ, len(devs))
	}
	t.Logf("single box: %d transitions, partitioned %d; %d of %d devices differ", len(single.trans), len(wantTrans), differ, len(devs))
}
