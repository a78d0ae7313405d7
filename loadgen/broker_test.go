package loadgen_test

// Round trips over real MQTT: a real broker.Start on 127.0.0.1 with free
// ports, driven by the load generator with a tiny, bounded load.

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/loadgen"
	"github.com/edgefence/edgefence/loadgen/fencegen"
	"github.com/edgefence/edgefence/loadgen/probe"
)

// startBroker starts edgefence serve's broker on free loopback ports with
// 20 generated fences; set changes its configuration first.
func startBroker(t *testing.T, engineOff bool, set ...func(*broker.Config)) (*broker.Server, []fencegen.Fence) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fences.geojson")
	fences, err := fencegen.Write(path, 20)
	if err != nil {
		t.Fatal(err)
	}
	cfg := broker.DefaultConfig()
	cfg.MQTTAddr, cfg.HTTPAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Fences = path
	cfg.FencesPoll = 0
	cfg.DataDir = ""
	cfg.PublishRate = 0
	cfg.Engine.Hold = 50 * time.Millisecond
	cfg.Engine.MaxSpeed = 0 // the load's devices jump across their fence's edge (suite.serveArgv)
	cfg.CloseTimeout = 5 * time.Second
	cfg.EngineOff = engineOff
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, f := range set {
		f(&cfg)
	}
	srv, err := broker.Start(cfg)
	if err != nil {
		t.Fatalf("broker.Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return srv, fences
}

func tinyLoad(srv *broker.Server, fences []fencegen.Fence, sub string) loadgen.Config {
	cfg := loadgen.DefaultConfig()
	cfg.Addr = srv.MQTTAddr()
	cfg.MetricsURL = "http://" + srv.HTTPAddr() + "/metrics"
	cfg.Conns, cfg.DevicesPerConn = 10, 2
	cfg.Rate = 400
	cfg.Warmup, cfg.Duration, cfg.Drain = 200*time.Millisecond, 800*time.Millisecond, 5*time.Second
	cfg.Sub = sub
	cfg.Fences = fences
	cfg.CrossEvery = 4
	return cfg
}

func scrape(t *testing.T, srv *broker.Server) probe.Metrics {
	t.Helper()
	m, err := probe.Scrape(context.Background(), "http://"+srv.HTTPAddr()+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestLoadAgainstEdgefence(t *testing.T) {
	srv, fences := startBroker(t, false)
	res, err := loadgen.Run(context.Background(), tinyLoad(srv, fences, "geofence/#"))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Sent == 0 || res.WriteErrors+res.ReadErrors > 0 {
		t.Fatalf("sent %d, %d write and %d read errors (%s)", res.Sent, res.WriteErrors, res.ReadErrors, res.FirstError)
	}
	m := scrape(t, srv)
	if got := m["edgefence_pings_received_total"]; got != float64(res.Sent) {
		t.Errorf("edgefence_pings_received_total = %v, loadgen sent %d", got, res.Sent)
	}
	if res.Acked != res.Sent || res.Unacked != 0 {
		t.Errorf("acked %d of %d, %d unacked", res.Acked, res.Sent, res.Unacked)
	}
	if res.Matched == 0 {
		t.Fatalf("no transition received; expected %d", res.Expected)
	}
	// Every ping that crossed an edge in the window caused exactly one
	// transition, and the subscriber got each.
	if res.Matched != res.Expected || res.Missing != 0 || res.Unmatched != 0 {
		t.Errorf("transitions: expected %d, matched %d, missing %d, unmatched %d", res.Expected, res.Matched, res.Missing, res.Unmatched)
	}
	if res.PingsSource != "metric" || res.PingsPerSec <= 0 {
		t.Errorf("pings/s %v from %q, want a positive rate from the metric", res.PingsPerSec, res.PingsSource)
	}
	if res.LatP50Ms < 50 {
		t.Errorf("latency p50 %.1f ms is below the 50 ms hold", res.LatP50Ms)
	}
}

func TestEngineOffRoutesWithoutEvaluating(t *testing.T) {
	srv, fences := startBroker(t, true)
	// A subscriber on devices/# receives the pings themselves.
	res, err := loadgen.Run(context.Background(), tinyLoad(srv, fences, "devices/#"))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Acked != res.Sent || res.Sent == 0 {
		t.Fatalf("acked %d of %d", res.Acked, res.Sent)
	}
	if res.SubMessages != res.Sent || res.Matched != res.Expected || res.Matched == 0 {
		t.Errorf("routing: subscriber got %d of %d pings, matched %d of %d marked", res.SubMessages, res.Sent, res.Matched, res.Expected)
	}
	if res.PingsSource != "acks" {
		t.Errorf("pings counted from %q, want acks: no telemetry metric with the engine off", res.PingsSource)
	}
	// A dashboard gets no transitions: nothing is evaluated.
	res, err = loadgen.Run(context.Background(), tinyLoad(srv, fences, "geofence/#"))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.SubMessages != 0 || res.Sent == 0 {
		t.Errorf("geofence/# got %d messages for %d pings, want none", res.SubMessages, res.Sent)
	}
	m := scrape(t, srv)
	for _, k := range []string{"edgefence_pings_received_total", `edgefence_transitions_total{type="ENTER"}`, "edgefence_active_devices", "edgefence_fences"} {
		if m.Has(k) {
			t.Errorf("engine off exposes %s", k)
		}
	}
	if !m.Has("edgefence_mqtt_clients_connected") {
		t.Error("engine off: no edgefence_mqtt_clients_connected")
	}
	if err := srv.ApplyFences([]byte(`{"type":"FeatureCollection","features":[]}`), "test"); err == nil {
		t.Error("ApplyFences with the engine off: no error")
	}
	resp, err := http.Get("http://" + srv.HTTPAddr() + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz = %d with the engine off", resp.StatusCode)
	}
}

func TestClientSettingsAreValidated(t *testing.T) {
	cfg := broker.DefaultConfig()
	cfg.MQTTAddr, cfg.HTTPAddr, cfg.DataDir = "127.0.0.1:0", "", ""
	cfg.ClientQueue = -1
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	if srv, err := broker.Start(cfg); err == nil {
		srv.Close(context.Background())
		t.Fatal("a negative client queue was accepted")
	}
}
