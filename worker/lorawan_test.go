package worker_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/fencefile"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/worker"
	"github.com/edgefence/edgefence/worker/checkpoint"
	"github.com/edgefence/edgefence/worker/subjects"
)

// chirpStackUp is a ChirpStack v4 uplink (JSON encoding) of device
// devEUI, named name, frame fcnt, heard by a GPS gateway at gw.
func chirpStackUp(devEUI, name string, fcnt int, lat, lon float64, gw time.Time) string {
	return fmt.Sprintf(`{"time":%q,"deviceInfo":{"applicationId":"17c82e96-be03-4f38-aef3-f83d48582d97","deviceName":%q,"devEui":%q},`+
		`"devAddr":"00189440","fCnt":%d,"fPort":2,"object":{"latitude":%.6f,"longitude":%.6f,"accuracy":8},`+
		`"rxInfo":[{"gatewayId":"0016c001f153a14c","gwTime":%q,"nsTime":%q,"rssi":-36}]}`,
		gw.Add(300*time.Millisecond).Format(time.RFC3339Nano), name, devEUI, fcnt, lat, lon,
		gw.Format(time.RFC3339Nano), gw.Add(250*time.Millisecond).Format(time.RFC3339Nano))
}

// ttsUp is a The Things Stack v3 uplink of device id, frame fcnt.
func ttsUp(id, devEUI string, fcnt int, lat, lon float64, gw time.Time) string {
	return fmt.Sprintf(`{"end_device_ids":{"device_id":%q,"application_ids":{"application_id":"fleet"},"dev_eui":%q},`+
		`"received_at":%q,"uplink_message":{"session_key_id":"AXA50IIb8oD5bSv3zEOWtg==","f_port":1,"f_cnt":%d,`+
		`"decoded_payload":{"lat":%.6f,"lng":%.6f},"rx_metadata":[{"gateway_ids":{"gateway_id":"gtw1"},"gps_time":%q}],"received_at":%q}}`,
		id, devEUI, gw.Add(400*time.Millisecond).Format(time.RFC3339Nano), fcnt, lat, lon,
		gw.Format(time.RFC3339Nano), gw.Add(300*time.Millisecond).Format(time.RFC3339Nano))
}

// TestLoRaWANUplinksPartitioned: ChirpStack and The Things Stack uplinks
// published over MQTT to NATS, with the shipped mappings and a worker's
// default telemetry topics, land each device in one partition (by the
// topic's device level: a TTS application@tenant level with its '@'
// included), become pings of the device the uplink names, and give the
// transitions one engine per partition fed the same stream gives (a
// frame heard twice is in the stream twice; the worker's reader drops
// the copy as the reference's does).
func TestLoRaWANUplinksPartitioned(t *testing.T) {
	const p = 4
	url, mqttAddr := startNATS(t, p, `listen: "127.0.0.1:-1"
mqtt { listen: "127.0.0.1:-1" }
`)
	cfg := securedConfig(t, url, mqttAddr)
	cfg.Partitions = p
	w, err := worker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			_ = w.Close(context.Background())
		}
	}()
	waitOwnedAll(t, w, p)

	tracker := mqttClient(t, "network-server", mqttAddr)
	type dev struct{ topic, id string }
	var devs []dev
	for i := range 6 {
		eui := fmt.Sprintf("a84041000181%04x", i)
		devs = append(devs, dev{"application/17c82e96-be03-4f38-aef3-f83d48582d97/device/" + eui + "/event/up", eui})
		id := fmt.Sprintf("tracker-%d", i)
		devs = append(devs, dev{"v3/fleet@acme/devices/" + id + "/up", id})
	}
	const rounds = 13
	for r := range rounds {
		now := time.Now()
		for i, d := range devs {
			lat, lon := 52.45+float64(i)*0.001, 13.4000+float64(r)*0.0009+float64(i%3)*0.0001
			var body string
			if strings.HasPrefix(d.topic, "v3/") {
				body = ttsUp(d.id, fmt.Sprintf("0004A30B001C%04X", i), r, lat, lon, now)
			} else {
				body = chirpStackUp(d.id, "truck-"+d.id, r, lat, lon, now)
			}
			n := 1
			if r == 5 && i < 2 {
				n = 2 // heard twice, not merged: one ping
			}
			for range n {
				if tok := tracker.Publish(d.topic, 1, false, body); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
					t.Fatalf("publish: %v", tok.Error())
				}
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
	nc := connect(t, url)
	js, _ := jetstream.New(nc)
	waitQuiet(t, js, 3*time.Second)
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	closed = true

	// Partitioning: each device in one partition, by its device level.
	msgs := pingsOf(t, js)
	partOf := map[string]int{}
	used := map[int]bool{}
	uplinks := 0
	for _, m := range msgs {
		if strings.HasSuffix(m.subject, "._tick") {
			continue
		}
		uplinks++
		for _, d := range devs {
			if strings.Contains(m.subject, "."+d.id+".") {
				if q, ok := partOf[d.id]; ok && q != m.part {
					t.Errorf("device %s in partitions %d and %d", d.id, q, m.part)
				}
				partOf[d.id], used[m.part] = m.part, true
			}
		}
		if strings.Contains(m.subject, ".v3.") && !strings.Contains(m.subject, ".v3.fleet@acme.devices.") {
			t.Errorf("TTS subject %s: the application@tenant level did not pass through", m.subject)
		}
	}
	if want := rounds*len(devs) + 2; uplinks != want || len(partOf) != len(devs) || len(used) < 2 {
		t.Fatalf("%d uplinks in the stream (want %d), %d devices in %d partitions", uplinks, want, len(partOf), len(used))
	}

	// Against one engine per partition fed the same stream, up to the
	// final checkpoint each partition took on Close.
	_, set, err := fencefile.Open(cfg.Fences, slog.Default())
	if err != nil {
		t.Fatal(err)
	}
	filters, err := ingest.ParseTelemetryFilters(subjects.DefaultTelemetryFilters)
	if err != nil {
		t.Fatal(err)
	}
	var want []received
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for n := range p {
		upTo, err := checkpoint.Seq(ctx, js, n)
		if err != nil {
			t.Fatal(err)
		}
		var part []streamMsg
		for _, m := range msgs {
			if m.part == n && m.seq <= upTo {
				part = append(part, m)
			}
		}
		want = append(want, referenceWith(t, set, filters, part).out...)
	}
	got := historyOf(t, js)
	transitions := 0
	for _, r := range got {
		if strings.HasPrefix(r.topic, "geofence/") {
			transitions++
		}
		if !slices.ContainsFunc(devs, func(d dev) bool { return strings.HasSuffix(r.topic, "/"+d.id) }) {
			t.Errorf("output %s names no device of the fleet", r.topic)
		}
	}
	diffDevices(t, "history", byDevice(got), byDevice(want))
	if transitions < 3*len(devs) {
		t.Errorf("%d transitions from %d devices crossing three fences", transitions, len(devs))
	}
	t.Logf("%d uplinks, %d devices in %d partitions, %d outputs (%d transitions), equal to the per-partition reference",
		uplinks, len(devs), len(used), len(got), transitions)
}

// referenceWith is reference with the telemetry filters given: one
// Processor fed msgs at their stream instants, ticks sweeping.
func referenceWith(t *testing.T, set *fence.Set, filters []ingest.TelemetryFilter, msgs []streamMsg) *refSink {
	t.Helper()
	var sink refSink
	cfg := engineConfig()
	proc, err := evaluator.NewProcessor(cfg, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), func() *fence.Set { return set }, &sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	reader := ingest.NewReader(filters, nil, nil, ingest.NewMetrics(metrics.NewSet()), slog.New(slog.NewTextHandler(os.Stderr, nil)), 4096)
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
			continue // a frame's second copy
		}
		pg := engine.NewPing(cfg.Clamper(), id, &pos, now)
		proc.Ingest(&pg)
		proc.Advance(now)
	}
	return &sink
}

// TestLoRaWANFrameCopyAcrossTakeover: a frame's second copy (a second
// gateway's, a broker's redelivery) that reaches the stream after its
// partition changed owners is dropped as it is without a takeover: the
// frame counters seen are in the checkpoint, so the new owner's engine
// does not take the frame a second time.
func TestLoRaWANFrameCopyAcrossTakeover(t *testing.T) {
	url, mqttAddr := startNATS(t, 1, `listen: "127.0.0.1:-1"
mqtt { listen: "127.0.0.1:-1" }
`)
	cfg := securedConfig(t, url, mqttAddr)
	cfg.Partitions, cfg.HTTPAddr = 1, "127.0.0.1:0"
	tracker := mqttClient(t, "network-server", mqttAddr)
	const eui = "a840410001810001"
	topic := "application/17c82e96-be03-4f38-aef3-f83d48582d97/device/" + eui + "/event/up"
	body := chirpStackUp(eui, "truck-1", 7, 52.45, 13.40, time.Now())
	publish := func() {
		t.Helper()
		if tok := tracker.Publish(topic, 1, false, body); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("publish: %v", tok.Error())
		}
	}
	start := func(name string) *worker.Worker {
		t.Helper()
		c := cfg
		c.Name = name
		w, err := worker.Start(c)
		if err != nil {
			t.Fatal(err)
		}
		waitOwnedAll(t, w, 1)
		return w
	}
	// read waits until w has read n pings and returns its counters of
	// uplinks taken and of copies dropped.
	read := func(w *worker.Worker, n int) (taken, copies string) {
		t.Helper()
		for range 300 {
			m := scrape(t, w.HTTPAddr())
			if m["edgefence_worker_pings_total"] == strconv.Itoa(n) {
				return m[`edgefence_uplinks_total{time_source="gateway_gps"}`], m["edgefence_uplinks_duplicate_total"]
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("worker %s did not read %d pings", w.HTTPAddr(), n)
		return "", ""
	}

	w1 := start("w1")
	publish() // the first gateway's copy
	if taken, copies := read(w1, 1); taken != "1" || copies != "0" {
		t.Fatalf("first copy: %s taken, %s dropped, want 1 and 0", taken, copies)
	}
	if err := w1.Close(context.Background()); err != nil { // a final checkpoint after it
		t.Fatal(err)
	}
	w2 := start("w2")
	defer func() { _ = w2.Close(context.Background()) }()
	publish() // the second gateway's copy, after the takeover
	if taken, copies := read(w2, 1); taken != "0" || copies != "1" {
		t.Errorf("second copy on the new owner: %s taken, %s dropped, want 0 and 1", taken, copies)
	}
}

// scrape returns the samples of the /metrics page at addr, by series.
func scrape(t *testing.T, addr string) map[string]string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := map[string]string{}
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.LastIndexByte(l, ' '); i > 0 && !strings.HasPrefix(l, "#") {
			m[l[:i]] = l[i+1:]
		}
	}
	return m
}
