package broker_test

// End-to-end helpers: a real broker.Start on 127.0.0.1 with free ports and
// a temp data dir, real MQTT 5 clients (paho.golang) speaking TCP to it, and
// the HTTP endpoints. Nothing of the broker is mocked.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"go.uber.org/goleak"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/internal/mqtttest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// wait bounds every wait for something the broker should produce.
const wait = 5 * time.Second

// Positions, checked against ../fences.geojson.
const (
	museumLat, museumLon = 52.52, 13.40     // inside only zone-museumsinsel
	outLat, outLon       = 52.50, 13.30     // inside no fence
	alexLat, alexLon     = 52.5219, 13.4132 // centre of customer-alex (150 m circle)
)

// testLog is where the broker under test logs: nowhere unless
// EDGEFENCE_TEST_LOG is set (the broker logs from its own goroutines,
// which must not outlive a test's t.Log).
func testLog() *slog.Logger {
	if os.Getenv("EDGEFENCE_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// testConfig is the documented default configuration on free loopback
// ports, the bundled fences, a fresh data dir and a 100 ms hold.
func testConfig(t testing.TB) broker.Config {
	t.Helper()
	cfg := broker.DefaultConfig()
	cfg.MQTTAddr = "127.0.0.1:0"
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.Fences = filepath.Join("..", "fences.geojson")
	cfg.DataDir = t.TempDir()
	cfg.Engine.Hold = 100 * time.Millisecond
	// The fixtures jump kilometres in a second, which the speed gate (on by
	// default) sets aside; the gate has tests of its own.
	cfg.Engine.MaxSpeed = 0
	cfg.CloseTimeout = wait
	cfg.Log = testLog()
	return cfg
}

// start starts a broker and closes it when the test ends.
func start(t testing.TB, cfg broker.Config) *broker.Server {
	t.Helper()
	srv, err := broker.Start(cfg)
	if err != nil {
		t.Fatalf("broker.Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Errorf("Close: %v\n%s", err, stacks())
		}
	})
	return srv
}

// stacks returns every goroutine's stack, to see what a hung close waits on.
func stacks() []byte {
	buf := make([]byte, 1<<20)
	return buf[:runtime.Stack(buf, true)]
}

// closeServer closes srv now (a restart test's first run).
func closeServer(t *testing.T, srv *broker.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// writeFences writes a FeatureCollection of the given features to a temp
// file and returns its path.
func writeFences(t *testing.T, features ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fences.geojson")
	body := `{"type":"FeatureCollection","features":[` + strings.Join(features, ",") + `]}`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// ---- MQTT 5 clients ----

// client5 is the tests' MQTT 5 client (internal/mqtttest) with the broker
// tests' conveniences.
type client5 struct{ *mqtttest.Client }

// connect5 connects an MQTT 5 client to addr, disconnected when the test
// ends. It subscribes with retain-as-published, so that live messages show
// whether the broker retained them.
func connect5(t *testing.T, addr, name string) *client5 {
	t.Helper()
	cl := &client5{mqtttest.Connect(t, addr, name, wait)}
	cl.RetainAsPublished = true
	return cl
}

// ping publishes a canonical ping at QoS 1 and requires a successful PUBACK.
func (cl *client5) ping(device string, lat, lon float64, tsMs int64) {
	cl.T.Helper()
	if rc := cl.Publish("devices/"+device+"/telemetry", 1, canonical(lat, lon, tsMs)); rc != 0 {
		cl.T.Fatalf("ping %s: PUBACK reason %#x", device, rc)
	}
}

// flush returns once the broker has finished with every packet this
// client sent before. mochi acknowledges a QoS 1 publish before it routes
// it, but handles a client's packets one at a time, so the PUBACK of one
// more publish (to a topic nobody subscribes to) comes after the routing.
func (cl *client5) flush() {
	cl.T.Helper()
	if rc := cl.Publish("edgefence-test/flush", 1, nil); rc >= 0x80 {
		cl.T.Fatalf("flush: reason %#x", rc)
	}
}

// canonical is a ping at lat, lon stamped tsMs, without an accuracy: it
// counts at its position alone, so one ping makes a transition (the
// tests of the accuracy rules send their own, docs/fences.md).
func canonical(lat, lon float64, tsMs int64) []byte {
	return fmt.Appendf(nil, `{"lat":%v,"lon":%v,"ts":%d}`, lat, lon, tsMs)
}

// subscribeWith subscribes cl with opts and, unless subID is 0, an MQTT 5
// subscription identifier, and requires the one filter to be granted.
func subscribeWith(t *testing.T, cl *client5, opts paho.SubscribeOptions, subID int) {
	t.Helper()
	s := &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{opts}}
	if subID != 0 {
		s.Properties = &paho.SubscribeProperties{SubscriptionIdentifier: &subID}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	sa, err := cl.Paho.Subscribe(ctx, s)
	if err != nil || len(sa.Reasons) != 1 || sa.Reasons[0] >= 0x80 {
		t.Fatalf("subscribe %+v (identifier %d): %v %v", opts, subID, err, sa)
	}
}

// ---- transitions ----

// transition is the documented JSON payload of <prefix>/<fence>/<device>.
type transition struct {
	Device      string  `json:"device"`
	Fence       string  `json:"fence"`
	Type        string  `json:"type"`
	EventTime   string  `json:"event_time"`
	Ts          int64   `json:"ts"`
	Lat         float64 `json:"lat"`
	Lon         float64 `json:"lon"`
	Clamped     *bool   `json:"clamped"`
	ClampReason string  `json:"clamp_reason"`
	Timer       bool    `json:"timer"`
	Reversal    bool    `json:"reversal"`
	Historic    bool    `json:"historic"`

	topic    string
	retained bool
	expiry   *uint32
}

func (tr transition) String() string {
	return fmt.Sprintf("%s %s %s ts=%d", tr.Type, tr.Fence, tr.Device, tr.Ts)
}

// short is "TYPE fence device", for comparing sequences.
func (tr transition) short() string { return tr.Type + " " + tr.Fence + " " + tr.Device }

// decodeTransition checks a transition message against the contract: its
// topic, QoS and payload fields.
func decodeTransition(t *testing.T, prefix string, m *paho.Publish) transition {
	t.Helper()
	var tr transition
	if err := json.Unmarshal(m.Payload, &tr); err != nil {
		t.Fatalf("transition on %s is not JSON: %v: %s", m.Topic, err, m.Payload)
	}
	tr.topic, tr.retained = m.Topic, m.Retain
	if m.Properties != nil {
		tr.expiry = m.Properties.MessageExpiry
	}
	if want := prefix + "/" + tr.Fence + "/" + tr.Device; m.Topic != want {
		t.Errorf("transition %s on topic %s, want %s", tr, m.Topic, want)
	}
	switch tr.Type {
	case "ENTER", "EXIT", "DWELL":
	default:
		t.Errorf("transition type %q on %s", tr.Type, m.Topic)
	}
	if m.QoS != 1 {
		t.Errorf("transition %s delivered at QoS %d, want 1", tr, m.QoS)
	}
	if tr.Clamped == nil {
		t.Errorf("transition %s has no clamped field: %s", tr, m.Payload)
	} else if *tr.Clamped != (tr.ClampReason != "") {
		t.Errorf("transition %s: clamped=%v with clamp_reason %q", tr, *tr.Clamped, tr.ClampReason)
	}
	et, err := time.Parse(time.RFC3339Nano, tr.EventTime)
	if err != nil || !strings.HasSuffix(tr.EventTime, "Z") {
		t.Errorf("transition %s: event_time %q is not an RFC 3339 UTC time: %v", tr, tr.EventTime, err)
	} else if et.UnixMilli() != tr.Ts {
		t.Errorf("transition %s: event_time %s is not ts %d", tr, tr.EventTime, tr.Ts)
	}
	return tr
}

// nextTransition waits for the next transition on a subscriber of
// <prefix>/#, skipping nothing.
func nextTransition(t *testing.T, cl *client5, what string) transition {
	t.Helper()
	return decodeTransition(t, "geofence", cl.Next(what))
}

// expectTransitions requires the next transitions to be exactly want
// ("TYPE fence device"), in order, and returns them.
func expectTransitions(t *testing.T, cl *client5, want ...string) []transition {
	t.Helper()
	var got []transition
	for _, w := range want {
		tr := nextTransition(t, cl, w)
		got = append(got, tr)
		if tr.short() != w {
			t.Fatalf("transition %d is %s, want %s (so far: %v)", len(got), tr, w, got)
		}
	}
	return got
}

// ---- HTTP ----

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: wait}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

// metrics returns the broker's /metrics as series -> value, read as the
// admin scraper (which a server without --auth ignores).
func metrics(t *testing.T, srv *broker.Server) map[string]float64 {
	t.Helper()
	req, err := http.NewRequest("GET", "http://"+srv.HTTPAddr()+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(scraper, secret)
	resp, err := (&http.Client{Timeout: wait}).Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	code, body := resp.StatusCode, string(raw)
	if code != http.StatusOK {
		t.Fatalf("/metrics: status %d", code)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			t.Fatalf("/metrics: malformed line %q", line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("/metrics: malformed value in %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// metric returns one series' value, failing when it is not exported.
func metric(t *testing.T, srv *broker.Server, series string) float64 {
	t.Helper()
	v, ok := metrics(t, srv)[series]
	if !ok {
		t.Fatalf("/metrics has no series %s", series)
	}
	return v
}

// nowMs is the test's clock in epoch milliseconds.
func nowMs() int64 { return time.Now().UnixMilli() }
