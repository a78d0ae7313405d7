package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/loadgen/probe"
	"github.com/edgefence/edgefence/worker/subjects"
)

// TestThroughput measures pings/s and CPU per ping through 1 and 2
// workers on a three-node cluster on this box: the ping stream is loaded
// first, then the workers drain it. Only under EDGEFENCE_SCALEOUT_BENCH
// (scripts/scaleout-bench); the figures go to docs/scale-out.md.
func TestThroughput(t *testing.T) {
	if os.Getenv("EDGEFENCE_SCALEOUT_BENCH") == "" {
		t.Skip("a measurement: scripts/scaleout-bench runs it")
	}
	pings, devices := 200_000, 2000
	if s := os.Getenv("EDGEFENCE_SCALEOUT_PINGS"); s != "" {
		pings, _ = strconv.Atoi(s)
	}
	for _, k := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", k), func(t *testing.T) { throughput(t, k, pings, devices) })
	}
}

func throughput(t *testing.T, k, pings, devices int) {
	const p = 16
	nodes := startCluster(t, p)
	urls := nodes[0].url() + "," + nodes[1].url() + "," + nodes[2].url()
	nc := connect(t, urls)
	js, _ := jetstream.New(nc)
	// The streams as a worker makes them, before the load.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: subjects.PingStream, Subjects: []string{subjects.PingSubjectPrefix + ">"}, Replicas: 3, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := range pings {
		d := i % devices
		r := i / devices
		lon := 13.4000 + float64((d*7+r*4)%130)*0.0001
		body := fmt.Sprintf(`{"lat":%.5f,"lon":%.5f,"ts":%d}`, 52.45+float64(d%1000)*0.0002, lon, time.Now().UnixMilli())
		if err := nc.Publish(fmt.Sprintf("devices.dev-%05d.telemetry", d), []byte(body)); err != nil {
			t.Fatal(err)
		}
		if i%5000 == 4999 {
			if err := nc.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Core publishes have no flow control: count what the stream took.
	var loaded uint64
	for since := time.Now(); time.Since(since) < 2*time.Second; time.Sleep(100 * time.Millisecond) {
		s, err := js.Stream(ctx, subjects.PingStream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs != loaded {
			loaded, since = info.State.Msgs, time.Now()
		}
	}
	pings = int(loaded)
	t.Logf("loaded %d pings of %d devices in %v", pings, devices, time.Since(start).Round(time.Millisecond))

	dir := t.TempDir()
	fencePath := filepath.Join(dir, "fences.geojson")
	fences := testFences
	if os.Getenv("EDGEFENCE_SCALEOUT_NO_TRANSITIONS") != "" {
		// The devices drive nowhere near this fence: the cost of pings alone.
		fences = strings.ReplaceAll(testFences, ",52.", ",12.")
	}
	if err := os.WriteFile(fencePath, []byte(fences), 0o600); err != nil {
		t.Fatal(err)
	}
	natsCPU := func() time.Duration {
		var sum time.Duration
		for _, n := range nodes {
			st, _ := probe.ReadProc(n.cmd.Process.Pid)
			sum += st.CPU
		}
		return sum
	}
	var ws []*proc
	var addrs []string
	var t0 time.Time
	// The default shape has no NATS MQTT side (the retained bucket only);
	// EDGEFENCE_SCALEOUT_NATS_MQTT=1 publishes there too, as before.
	natsMQTT := ""
	if os.Getenv("EDGEFENCE_SCALEOUT_NATS_MQTT") == "1" {
		natsMQTT = nodes[0].mqttAddr() + "," + nodes[1].mqttAddr()
	}
	for i := range k {
		arg, _ := json.Marshal(workerArgs{
			NATS: urls, MQTT: natsMQTT, Name: fmt.Sprintf("w%d", i+1), Fences: fencePath,
			Partitions: p, Lease: 5 * time.Second, Checkpoint: 5 * time.Second, HTTPAddr: "127.0.0.1:0",
		})
		w := startProc(t, fmt.Sprintf("w%d", i+1), "worker", string(arg))
		ws = append(ws, w)
		addrs = append(addrs, httpAddrOf(t, w))
	}
	scrape := func() (done, published float64) {
		for _, a := range addrs {
			if m, err := probe.Scrape(context.Background(), "http://"+a+"/metrics"); err == nil {
				done += m["edgefence_worker_pings_total"]
				// Over MQTT every output; in the bucket the retained ones.
				published += max(m["edgefence_worker_published_total"], m["edgefence_worker_retained_writes_total"])
			}
		}
		return done, published
	}
	workerCPU := func() time.Duration {
		var sum time.Duration
		for _, w := range ws {
			st, _ := probe.ReadProc(w.cmd.Process.Pid)
			sum += st.CPU
		}
		return sum
	}
	// Measure from when every partition is owned, k workers sharing them.
	names := make([]string, k)
	for i := range names {
		names[i] = fmt.Sprintf("w%d", i+1)
	}
	waitOwned(t, js, p, names...)
	t0 = time.Now()
	n0, c0 := natsCPU(), workerCPU()
	done0, pub0 := scrape()
	var done, transitions float64
	for time.Since(t0) < 10*time.Minute {
		done, transitions = scrape()
		if done >= float64(pings) {
			break
		}
		for _, w := range ws {
			select {
			case <-w.done:
				t.Fatalf("%s exited:\n%s", w.name, tail(w.out.String(), 2000))
			default:
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	elapsed := time.Since(t0)
	cpu, ncpu := workerCPU()-c0, natsCPU()-n0
	n := done - done0
	t.Logf("RESULT workers=%d pings=%d (%.0f measured, after all partitions were owned) devices=%d partitions=%d seconds=%.2f pings/s=%.0f worker_cpu_us/ping=%.2f nats_cpu_us/ping=%.2f published=%.0f",
		k, pings, n, devices, p, elapsed.Seconds(), n/elapsed.Seconds(),
		float64(cpu.Microseconds())/n, float64(ncpu.Microseconds())/n, transitions-pub0)
	for _, w := range ws {
		w.stop(t)
	}
	// Every output of the run, also those outside the window: how many
	// the engine decides varies between runs with the load's timestamps.
	hctx, hcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer hcancel()
	if hs, err := js.Stream(hctx, subjects.HistoryStream); err == nil {
		if info, err := hs.Info(hctx); err == nil {
			t.Logf("RESULT workers=%d history records %d", k, info.State.Msgs)
		}
	}
}

// httpAddrOf waits for worker process w to tell the address its HTTP
// endpoints bound (httpLine).
func httpAddrOf(t *testing.T, w *proc) string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for line := range strings.Lines(w.out.String()) {
			if a, ok := strings.CutPrefix(strings.TrimSpace(line), httpLine); ok {
				return a
			}
		}
		select {
		case <-w.done:
			t.Fatalf("%s exited before it listened:\n%s", w.name, tail(w.out.String(), 4000))
		default:
		}
	}
	t.Fatalf("%s did not tell its HTTP address", w.name)
	return ""
}
