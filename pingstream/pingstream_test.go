package pingstream_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgefence/edgefence/internal/natstest"

	"github.com/VictoriaMetrics/metrics"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"
	"pgregory.net/rapid"

	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/pingstream"
	"github.com/edgefence/edgefence/worker/subjects"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startNATS starts a NATS server with JetStream and the default
// telemetry subjects mapped onto p partitions, as NATS's MQTT side and
// the shipped nats.conf map them.
func startNATS(t *testing.T, p int) string {
	t.Helper()
	dir := t.TempDir()
	var maps []string
	for from, to := range subjects.PartitionMappings(p) {
		maps = append(maps, strconv.Quote(from)+": "+strconv.Quote(to))
	}
	conf := fmt.Sprintf("listen: \"127.0.0.1:-1\"\njetstream { store_dir: %q }\nmappings = { %s }\n",
		filepath.Join(dir, "js"), strings.Join(maps, ", "))
	s, _ := natstest.Start(t, dir, "nats.conf", conf)
	return s.ClientURL()
}

// TestPingSubjectIsTheServersMapping: a device's pings published by
// serve --cluster land in the partition the servers' subject mapping
// puts the same topic in (NATS's MQTT side, a tracker publishing over
// NATS), so both ways in feed one partition per device — for a topic
// with a '.' in its device level, OwnTracks' two levels and a LoRaWAN
// network server's topic, whose device is its last level.
func TestPingSubjectIsTheServersMapping(t *testing.T) {
	const p = 16
	url := startNATS(t, p)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: subjects.PingStream, Subjects: []string{subjects.PingSubjectPrefix + ">"}}); err != nil {
		t.Fatal(err)
	}
	filters := ingest.DefaultFilters()
	var topics []string
	for i := range 40 {
		topics = append(topics, fmt.Sprintf("devices/truck-%d/telemetry", i), fmt.Sprintf("devices/v1.%d/telemetry", i),
			fmt.Sprintf("owntracks/user%d/phone%d", i%3, i), fmt.Sprintf("application/app-%d/device/%016x/event/up", i%2, i*7919),
			fmt.Sprintf("v3/app@ttn/devices/dev-%d/up", i))
	}
	for _, topic := range topics {
		// What NATS's MQTT side makes of the topic: '/' → '.', '.' → "//".
		subj := strings.NewReplacer("/", ".", ".", "//").Replace(topic)
		if _, err := js.Publish(ctx, subj, nil); err != nil {
			t.Fatalf("publish %s: %v", subj, err)
		}
	}
	c, err := js.OrderedConsumer(ctx, subjects.PingStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for i, topic := range topics {
		m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		got, err := subjects.PingSubject(filters, topic, p)
		if err != nil {
			t.Fatalf("PingSubject(%s): %v", topic, err)
		}
		if got != m.Subject() {
			t.Errorf("%s: serve --cluster publishes on %s, the servers' mapping stores it on %s", topic, got, m.Subject())
		}
	}
}

// TestPingSubjectRefusesWhatNATSCannotCarry: a level NATS would read as
// a wildcard or split is refused, not published somewhere else.
func TestPingSubjectRefusesWhatNATSCannotCarry(t *testing.T) {
	for _, topic := range []string{"devices/a b/telemetry", "devices/*/telemetry", "devices/>/telemetry", "other/x"} {
		if s, err := subjects.PingSubject(ingest.DefaultFilters(), topic, 4); err == nil {
			t.Errorf("%q: subject %q, want an error", topic, s)
		}
	}
}

// TestMsgID: copies of a ping (same device, stamp, position, frame) get
// one id; a ping differing in any of them gets another; a ping with
// neither stamp nor frame counter gets none, as two of them at one spot
// may be two pings.
func TestMsgID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.StringN(1, 20, -1).Draw(t, "id")
		pos := payload.Position{
			Lat: rapid.Float64Range(-90, 90).Draw(t, "lat"), Lon: rapid.Float64Range(-180, 180).Draw(t, "lon"),
			Acc: rapid.Float64Range(0, 1000).Draw(t, "acc"), HasAcc: rapid.Bool().Draw(t, "hasAcc"),
			TsNs: rapid.Int64().Draw(t, "ts"), HasTs: rapid.Bool().Draw(t, "hasTs"),
			Seq: rapid.Uint32().Draw(t, "seq"), HasSeq: rapid.Bool().Draw(t, "hasSeq"),
		}
		a, b := pingstream.MsgID(id, &pos), pingstream.MsgID(id, new(pos))
		if a != b {
			t.Fatalf("copies differ: %s, %s", a, b)
		}
		if !pos.HasTs && !pos.HasSeq {
			if a != "" {
				t.Fatalf("an id %s for a ping without stamp or frame", a)
			}
			return
		}
		other := pos
		switch rapid.IntRange(0, 4).Draw(t, "field") {
		case 0:
			other.Lat = nudge(other.Lat)
		case 1:
			other.Lon = nudge(other.Lon)
		case 2:
			other.TsNs++
			other.HasTs = true
		case 3:
			other.Seq++
			other.HasSeq = true
		case 4:
			if pingstream.MsgID(id+"x", &pos) == a {
				t.Fatalf("another device, the same id %s", a)
			}
			return
		}
		if pingstream.MsgID(id, &other) == a {
			t.Fatalf("%+v and %+v: the same id %s", pos, other, a)
		}
	})
}

// nudge returns a float near v and different from it.
func nudge(v float64) float64 {
	if v > 0 {
		return v - 1e-6
	}
	return v + 1e-6
}

// TestBoundsAndTimeouts: with a stream that takes pings and never
// acknowledges (a subscriber in its place that does not answer), QoS 0
// pings beyond the bound in flight are dropped and counted, a slot frees
// when a ping in flight times out, and a QoS 1 ping fails after the
// timeout, never taken for stored.
func TestBoundsAndTimeouts(t *testing.T) {
	url := startNATS(t, 1)
	set := metrics.NewSet()
	p, err := pingstream.Dial(pingstream.Options{NATS: url, Name: "t", Telemetry: ingest.DefaultFilters(), Partitions: 1, Replicas: 1,
		PingsMaxAge: time.Hour, Timeout: 500 * time.Millisecond, MaxAsync: 2, Metrics: set, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	if err := js.DeleteStream(context.Background(), subjects.PingStream); err != nil {
		t.Fatal(err)
	}
	sub, err := nc.SubscribeSync(subjects.PingSubjectPrefix + ">") // takes, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	pos := payload.Position{Lat: 52.5, Lon: 13.4, TsNs: 1, HasTs: true}
	forward := func(qos byte) error {
		pos.TsNs++
		return p.Forward(qos, "devices/d1/telemetry", []byte(`{}`), "d1", &pos)
	}
	for i := range 5 {
		err := forward(0)
		if want := i >= 2; errors.Is(err, pingstream.ErrShed) != want {
			t.Fatalf("QoS 0 ping %d with 2 in flight at most: %v", i, err)
		}
	}
	count := func(result string) uint64 {
		return set.GetOrCreateCounter(`edgefence_cluster_pings_total{result="` + result + `"}`).Get()
	}
	if count("shed") != 3 {
		t.Errorf("%d shed, want 3", count("shed"))
	}
	if err := forward(1); err == nil {
		t.Fatal("a QoS 1 ping nobody acknowledged was taken for stored")
	}
	for try := 0; count("failed") < 3; try++ { // the 2 in flight time out too
		if try == 50 {
			t.Fatalf("%d failed, want 3", count("failed"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := forward(0); err != nil {
		t.Fatalf("QoS 0 ping after the ones in flight timed out: %v", err)
	}
	if count("stored") != 0 {
		t.Errorf("%d counted stored", count("stored"))
	}
}

// TestEachPingResolvedOnce: while the server goes away under a stream of
// pings, QoS 1 and QoS 0 alike, each ping ends once — its done called
// exactly once, or an error returned instead, and one count in
// edgefence_cluster_pings_total — and none stays in flight, whichever of
// nats.go's paths (the publish's own error, the reset on a disconnect,
// the timeout) reports it first.
func TestEachPingResolvedOnce(t *testing.T) {
	dir := t.TempDir()
	s, _ := natstest.Start(t, dir, "nats.conf", fmt.Sprintf("listen: \"127.0.0.1:-1\"\njetstream { store_dir: %q }\n", filepath.Join(dir, "js")))
	set := metrics.NewSet()
	p, err := pingstream.Dial(pingstream.Options{NATS: s.ClientURL(), Name: "t", Telemetry: ingest.DefaultFilters(), Partitions: 4, Replicas: 1,
		PingsMaxAge: time.Hour, Timeout: 500 * time.Millisecond, Metrics: set, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	const workers, perWorker = 4, 3000
	var (
		mu      sync.Mutex
		calls   = map[int]int{} // QoS 1 ping → calls of its done
		errs    atomic.Int64    // QoS 1 pings refused by ForwardAsync's error
		qos0    atomic.Int64    // QoS 0 pings refused by Forward's error
		started = make(chan struct{})
		wg      sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				if w == 0 && i == perWorker/4 {
					close(started)
				}
				n := w*perWorker + i
				pos := payload.Position{Lat: 52.5, Lon: 13.4, TsNs: int64(n + 1), HasTs: true}
				topic := fmt.Sprintf("devices/d%d/telemetry", n%50)
				if n%2 == 0 {
					if p.Forward(0, topic, []byte(`{}`), "d", &pos) != nil {
						qos0.Add(1)
					}
					continue
				}
				err := p.ForwardAsync(topic, []byte(`{}`), "d", &pos, func(error) {
					mu.Lock()
					calls[n]++
					mu.Unlock()
				})
				if err != nil {
					errs.Add(1)
					mu.Lock()
					calls[n] += 1000 // an error returned and done called: both seen below
					mu.Unlock()
				}
			}
		})
	}
	<-started
	s.Shutdown()
	wg.Wait()
	count := func(result string) uint64 {
		return set.GetOrCreateCounter(`edgefence_cluster_pings_total{result="` + result + `"}`).Get()
	}
	inFlight := func() float64 { return set.GetOrCreateGauge(`edgefence_cluster_pings_in_flight`, nil).Get() }
	ended := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(calls)
	}
	// The timeout ends what is left; a done may run just after its ping
	// left the gauge.
	for try := 0; inFlight() != 0 || ended() != workers*perWorker/2; try++ {
		if try == 100 {
			t.Fatalf("%v pings still in flight, %d of %d QoS 1 pings ended", inFlight(), ended(), workers*perWorker/2)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // a second done, were there one
	mu.Lock()
	defer mu.Unlock()
	for n, c := range calls {
		if c != 1 && c != 1000 {
			t.Errorf("ping %d: done called %d times, an error returned %d times", n, c%1000, c/1000)
		}
	}
	total := count("stored") + count("duplicate") + count("failed") + count("shed")
	if total != workers*perWorker {
		t.Errorf("%d pings counted (stored %d, failed %d, shed %d), %d sent", total, count("stored"), count("failed"), count("shed"), workers*perWorker)
	}
	t.Logf("stored %d, failed %d, shed %d; %d QoS 1 and %d QoS 0 refused at once", count("stored"), count("failed"), count("shed"), errs.Load(), qos0.Load())
}
