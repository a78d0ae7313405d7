package broker_test

import (
	"net/http"
	"strings"
	"testing"
)

// documentedMetrics are the metric names the operator documentation
// promises; dashboards and alerts are built on them.
var documentedMetrics = []string{
	"edgefence_pings_received_total",
	"edgefence_rejected_total",
	"edgefence_clamped_total",
	"edgefence_late_total",
	"edgefence_shed_total",
	"edgefence_transitions_total",
	"edgefence_transition_reversals_total",
	"edgefence_active_devices",
	"edgefence_buffered_pings",
	"edgefence_watermark_lag_seconds",
	"edgefence_release_latency_seconds",
	"edgefence_decide_latency_seconds",
	"edgefence_publish_latency_seconds",
}

// An operator's probes and scrapes: liveness, readiness once the fences
// and retained state are loaded, Prometheus metrics under edgefence_*,
// and pprof only when asked for.
func TestHealthReadinessMetricsAndPprof(t *testing.T) {
	srv := start(t, testConfig(t))
	base := "http://" + srv.HTTPAddr()
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := httpGet(t, base+path); code != http.StatusOK {
			t.Errorf("GET %s: %d %q, want 200", path, code, body)
		}
	}

	// Exercise the pipeline once so the histograms and counters move.
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	tracker.ping("m-1", museumLat, museumLon, nowMs()-5000)
	expectTransitions(t, dash, "ENTER zone-museumsinsel m-1")

	code, body := httpGet(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	names := map[string]bool{}
	for line := range strings.Lines(body) {
		if line == "" || line[0] == '#' {
			continue
		}
		name := strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == ' ' })[0]
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if strings.HasSuffix(name, "_seconds"+suffix) {
				name = strings.TrimSuffix(name, suffix)
			}
		}
		names[name] = true
	}
	for _, n := range documentedMetrics {
		if !names[n] {
			t.Errorf("/metrics lacks %s", n)
		}
	}
	ms := metrics(t, srv)
	for series, want := range map[string]float64{
		"edgefence_pings_received_total":            1,
		`edgefence_transitions_total{type="ENTER"}`: 1,
		"edgefence_active_devices":                  1,
		"edgefence_decide_latency_seconds_count":    1,
		"edgefence_publish_latency_seconds_count":   1,
	} {
		if ms[series] != want {
			t.Errorf("%s = %v, want %v", series, ms[series], want)
		}
	}

	if code, _ := httpGet(t, base+"/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("GET /debug/pprof/ without Pprof: %d, want 404", code)
	}
	cfg := testConfig(t)
	cfg.Pprof = true
	withPprof := start(t, cfg)
	if code, _ := httpGet(t, "http://"+withPprof.HTTPAddr()+"/debug/pprof/"); code != http.StatusOK {
		t.Errorf("GET /debug/pprof/ with Pprof: %d, want 200", code)
	}
}
