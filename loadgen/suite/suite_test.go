package suite

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/loadgen"
)

func brokerNames(bs []brokerSpec) []string {
	var n []string
	for _, b := range bs {
		n = append(n, b.name)
	}
	return n
}

// Every scenario measures the one MQTT listener: the paced one runs the
// engine-on row first, then engine off (and Mosquitto when given), with
// and without --quick.
func TestPacedRows(t *testing.T) {
	for _, mosq := range []string{"", "/usr/sbin/mosquitto"} {
		for _, quick := range []bool{false, true} {
			s := Suite{Mosquitto: mosq, Quick: quick, Runs: 1}
			seen := false
			for _, sc := range s.scenarios() {
				if sc.name != "paced" {
					continue
				}
				seen = true
				want := []string{"edgefence (engine on)", "edgefence --engine=off"}
				if mosq != "" {
					want = append(want, "mosquitto, sub devices/#", "mosquitto, no subscriber traffic")
				}
				if got := brokerNames(sc.brokers); !slices.Equal(got, want) {
					t.Errorf("mosquitto %q quick %v: paced brokers %q, want %q", mosq, quick, got, want)
				}
				if quick && (sc.conns != 1000 || sc.rate != 5000) {
					t.Errorf("quick paced: %d conns at %v pings/s, want 1000 at 5000", sc.conns, sc.rate)
				}
			}
			if !seen {
				t.Errorf("mosquitto %q quick %v: no paced scenario", mosq, quick)
			}
		}
	}
}

func argAfter(argv []string, flag string) (string, bool) {
	i := slices.Index(argv, flag)
	if i < 0 || i+1 >= len(argv) {
		return "", false
	}
	return argv[i+1], true
}

// edgefence listens on port 0 (startEdgefence reads its ports from the
// "edgefence serving" line, logged at info).
func TestServeArgv(t *testing.T) {
	s := Suite{Bin: "/bin/edgefence"}
	edge := brokerSpec{name: "edgefence (engine on)", kind: kindEdgefence, hold: 500 * time.Millisecond, sub: "geofence/#"}
	argv := s.serveArgv(edge, "/f.geojson", "", true)
	want := map[string]string{"--mqtt-addr": "127.0.0.1:0", "--http-addr": "127.0.0.1:0", "--log-level": "info",
		"--hold": "500ms", "--rate": "0", "--fences": "/f.geojson", "--data-dir": ""}
	for f, v := range want {
		if got, ok := argAfter(argv, f); !ok || got != v {
			t.Errorf("%q: %s = %q (present %v), want %q", argv, f, got, ok, v)
		}
	}
	if argv[0] != "/bin/edgefence" || argv[1] != "serve" || !slices.Contains(argv, "--pprof") || slices.Contains(argv, "--engine=off") {
		t.Errorf("engine on: %q", argv)
	}
	off := brokerSpec{name: "edgefence --engine=off", kind: kindEngineOff}
	if argv := s.serveArgv(off, "f", "", false); !slices.Contains(argv, "--engine=off") {
		t.Errorf("engine off: %q", argv)
	}
}

func rowOf(scenario, broker string, pps, cpu, rss float64) *Row {
	return &Row{Scenario: scenario, Broker: broker, Runs: []*loadgen.Result{{PingsPerSec: pps, CPUPerPingUs: cpu, RSSMaxMB: rss}}}
}

// The ratios: the ceiling's engine on ÷ off, CPU per ping against
// Mosquitto and engine off, persistence's cost and the RSS bar.
func TestRatios(t *testing.T) {
	rows := []*Row{
		rowOf("ceiling", "edgefence (engine on)", 80000, 10, 0),
		rowOf("ceiling", "edgefence --engine=off", 100000, 8, 0),
		rowOf("ceiling", "edgefence with --data-dir", 60000, 14, 0),
		rowOf("paced", "edgefence (engine on)", 50000, 20, 450),
		rowOf("paced", "edgefence --engine=off", 50000, 17, 500),
		rowOf("paced", "mosquitto, sub devices/#", 50000, 10, 50),
		rowOf("paced", "mosquitto, no subscriber traffic", 50000, 8, 40),
	}
	var b strings.Builder
	(&Suite{}).writeRatios(&b, rows)
	out := b.String()
	for _, want := range []string{
		"engine on ÷ engine off throughput = **0.80×**",
		"CPU per ping edgefence 20.00 µs vs Mosquitto (routing to devices/#) 10.00 µs = **2.00×**; vs Mosquitto ingest only 8.00 µs = 2.50×",
		"edgefence RSS with 10,000 trackers under load, worst run 450 MB (bar ≤ 400 MB: NOT met)",
		"**1.40×** CPU per ping (bar ≤ 1.3×: NOT met)",
		"engine on ÷ engine off CPU per ping = **1.18×** (bar ≤ 1.25×: met)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

// The bar's latency is read at half the ceiling's rate in the ceiling's
// own writes; the same rate one ping to a write is reported beside it, and
// judged by no bar.
func TestLatencyRowsAndTheirBars(t *testing.T) {
	s := Suite{Runs: 1}
	burst := map[string]int{}
	for _, sc := range s.scenarios() {
		burst[sc.name] = max(sc.burst, 1)
		if (sc.name == "latency" || sc.name == "overload") && sc.rate != -0.5 {
			t.Errorf("%s at %v of the ceiling, want half", sc.name, -sc.rate)
		}
	}
	if burst["latency"] != 8 || burst["overload"] != 1 || burst["headroom"] != 1 || burst["paced"] != 1 {
		t.Errorf("pings per write by scenario %v: want latency 8 (the ceiling's windows), the others 1", burst)
	}
	lat := func(scenario, broker string, rate, p99 float64) *Row {
		return &Row{Scenario: scenario, Broker: broker, Runs: []*loadgen.Result{{Config: loadgen.Summary{Rate: rate}, LatP99Ms: p99, BrokerCores: 0.5}}}
	}
	var b strings.Builder
	(&Suite{}).writeRatios(&b, []*Row{
		lat("latency", "edgefence (engine on)", 88000, 504.0),
		lat("latency", "edgefence --hold 0", 88000, 5.5),
		lat("overload", "edgefence (engine on)", 88000, 560.0),
	})
	out := b.String()
	for _, want := range []string{
		"latency at 50% of the ceiling, its writes of 8 (88000 pings/s, broker 0.50 cores), edgefence (engine on): p99 504.0 ms vs hold + 5 ms = 505 ms: met",
		"latency at 50% of the ceiling, its writes of 8 (88000 pings/s, broker 0.50 cores), edgefence --hold 0: p99 5.5 ms vs hold + 5 ms = 5 ms: NOT met",
		"latency at 50% of the ceiling, one ping a write (88000 pings/s, broker 0.50 cores), edgefence (engine on): p99 560.0 ms vs hold + 5 ms = 505 ms: not the bar's load",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}
