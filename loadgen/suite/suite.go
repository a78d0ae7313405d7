// Package suite runs brokers side by side under the same loads: edgefence
// with the engine on and off, with a data directory, and Mosquitto, each
// its own process, each scenario a number of load generator runs
// (loadgen.Run); it prints the table of min/median/max, the ratios and the
// bars (scripts/bench, edgefence loadgen suite), and draws the pings/s and
// CPU per ping as an SVG chart.
package suite

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edgefence/edgefence/loadgen"
	"github.com/edgefence/edgefence/loadgen/fencegen"
	"github.com/edgefence/edgefence/progress"
)

// Suite runs brokers side by side under the same loads.
type Suite struct {
	Bin       string // edgefence binary
	Mosquitto string // mosquitto binary; "": skipped
	BrokerCPU string // taskset CPU list for the broker; "": not pinned
	Runs      int
	Out       string  // results directory; "": a new temp dir
	Only      string  // comma-separated scenarios
	Quick     bool    // small and short: a smoke test
	Profile   string  // CPU profile of edgefence's first ceiling run; engine off: Profile+".off"; other scenarios: Profile+"."+scenario
	Ceiling   float64 // pings/s the latency and headroom rates are shares of when the ceiling scenario is not run
	Log       io.Writer
	Status    *progress.Line // runs done of all, and the time left; nil: none
	Chart     string         // the SVG chart of the table; "": chart.svg in Out
}

// Default pins the broker to CPU 1 when taskset exists and there are
// two CPUs or more, and finds mosquitto on PATH or in /usr/sbin.
func Default() Suite {
	s := Suite{Runs: 3, Ceiling: 40000}
	if _, err := exec.LookPath("taskset"); err == nil && onlineCPUs() >= 2 {
		s.BrokerCPU = "1"
	}
	if p, err := exec.LookPath("mosquitto"); err == nil {
		s.Mosquitto = p
	} else if _, err := os.Stat("/usr/sbin/mosquitto"); err == nil {
		s.Mosquitto = "/usr/sbin/mosquitto"
	}
	return s
}

// onlineCPUs counts the machine's CPUs, whatever this process's affinity
// (runtime.NumCPU counts only the CPUs it may run on).
func onlineCPUs() int {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.NumCPU()
	}
	return strings.Count(string(b), "\nprocessor") + strings.Count(string(b[:min(len(b), 9)]), "processor")
}

// Broker kinds.
const (
	kindEdgefence = "edgefence"
	kindEngineOff = "engine-off"
	kindMosquitto = "mosquitto"
)

// brokerSpec is one broker configuration under test.
type brokerSpec struct {
	name string // row label
	kind string
	hold time.Duration
	sub  string // the loadgen subscriber's filter
	disk bool   // edgefence with a data dir (a fresh one per run), as serve runs by default
}

// scenario is one load, run against several brokers.
type scenario struct {
	name     string
	conns    int
	devices  int     // per connection
	rate     float64 // 0: unthrottled; <0: a share of edgefence's median ceiling
	window   int     // QoS 1 pings in flight per connection (and per write, unthrottled)
	burst    int     // paced: pings per write (0: 1)
	warmup   time.Duration
	duration time.Duration
	brokers  []brokerSpec
}

// Row is the runs of one scenario against one broker.
type Row struct {
	Scenario string            `json:"scenario"`
	Broker   string            `json:"broker"`
	Runs     []*loadgen.Result `json:"runs"`
}

const benchFences = 1000

func (s *Suite) scenarios() []scenario {
	edge := brokerSpec{name: "edgefence (engine on)", kind: kindEdgefence, hold: 500 * time.Millisecond, sub: "geofence/#"}
	off := brokerSpec{name: "edgefence --engine=off", kind: kindEngineOff, sub: "geofence/#"}
	mosq := brokerSpec{name: "mosquitto, sub devices/#", kind: kindMosquitto, sub: "devices/#"}
	mosqBare := brokerSpec{name: "mosquitto, no subscriber traffic", kind: kindMosquitto, sub: "geofence/#"}
	all := []brokerSpec{edge, off, mosq, mosqBare}
	if s.Mosquitto == "" {
		all = all[:2]
	}
	paced := all
	hold0 := edge
	hold0.name, hold0.hold = "edgefence --hold 0", 0
	disk := edge
	disk.name, disk.disk = "edgefence with --data-dir", true
	ceiling := []brokerSpec{edge, off, disk}
	ceiling = append(ceiling, all[2:]...)
	sc := []scenario{
		{name: "ceiling", conns: 1000, devices: 10, window: 8, warmup: 2 * time.Second, duration: 6 * time.Second, brokers: ceiling},
		{name: "paced", conns: 10000, devices: 1, rate: 50000, window: 8, warmup: 3 * time.Second, duration: 8 * time.Second, brokers: paced},
		// Half the ceiling's rate in the ceiling's own writes (8 pings a
		// write per connection, which its full windows make): the load
		// the ceiling measured, at half its rate, and the bar's. The
		// warm-up lets the broker's heap grow to its size between
		// collections once (the first cycle comes about 8 s in at this
		// load): until then every allocation faults in a fresh page, about
		// 5 % of the core, and a broker in service is past that.
		{name: "latency", conns: 1000, devices: 10, rate: -0.5, window: 8, burst: 8, warmup: 9 * time.Second, duration: 6 * time.Second, brokers: []brokerSpec{edge, hold0}},
		// The same rate one ping to a write costs about twice the CPU per
		// ping (a wake-up, a read and a write each): more than the core,
		// so its latency is a queue's.
		{name: "overload", conns: 1000, devices: 10, rate: -0.5, window: 8, warmup: 2 * time.Second, duration: 6 * time.Second, brokers: []brokerSpec{edge}},
		// One ping to a write with the core about half busy.
		{name: "headroom", conns: 1000, devices: 10, rate: -0.1, window: 8, warmup: 2 * time.Second, duration: 6 * time.Second, brokers: []brokerSpec{edge, hold0}},
	}
	if s.Quick {
		for i := range sc {
			sc[i].conns /= 10
			if sc[i].rate > 0 {
				sc[i].rate /= 10
			}
			sc[i].warmup, sc[i].duration = 500*time.Millisecond, 2*time.Second
		}
	}
	if s.Only != "" {
		keep := strings.Split(s.Only, ",")
		sc = slices.DeleteFunc(sc, func(x scenario) bool { return !slices.Contains(keep, x.name) })
	}
	return sc
}

func (s *Suite) logf(format string, args ...any) {
	if s.Log != nil {
		fmt.Fprintf(s.Log, "suite: "+format+"\n", args...)
	}
}

// Run runs every scenario s.Runs times against each of its brokers,
// interleaving the brokers within each round, and prints the table.
func Run(ctx context.Context, s Suite, w io.Writer) error {
	if s.Runs < 1 {
		return errors.New("runs: want at least 1")
	}
	if s.Out == "" {
		dir, err := os.MkdirTemp("", "edgefence-bench-")
		if err != nil {
			return err
		}
		s.Out = dir
	}
	if err := os.MkdirAll(s.Out, 0o755); err != nil {
		return err
	}
	if _, err := loadgen.RaiseFileLimit(30000); err != nil {
		return fmt.Errorf("raise the open-file limit: %w", err)
	}
	fencesPath := filepath.Join(s.Out, "fences-1000.geojson")
	fences, err := fencegen.Write(fencesPath, benchFences)
	if err != nil {
		return err
	}
	results, err := os.Create(filepath.Join(s.Out, "results.jsonl"))
	if err != nil {
		return err
	}
	defer results.Close()
	s.logf("results in %s; broker pinned to CPU %q; %d runs per row", s.Out, s.BrokerCPU, s.Runs)
	began := time.Now()
	if s.Status != nil {
		total := 0
		for _, sc := range s.scenarios() {
			total += s.Runs * len(sc.brokers)
		}
		s.Status.Restart("bench", "runs", int64(total), 0)
		s.Status.Start(time.Second)
		defer s.Status.Stop()
	}
	var rows []*Row
	ceiling := 0.0
	profiled := map[string]bool{} // broker kind → its first ceiling run profiled
	for _, sc := range s.scenarios() {
		rate := sc.rate
		if rate < 0 {
			if ceiling == 0 {
				ceiling = s.Ceiling // no ceiling run
			}
			rate = -rate * ceiling
		}
		scRows := make([]*Row, len(sc.brokers))
		for i, b := range sc.brokers {
			scRows[i] = &Row{Scenario: sc.name, Broker: b.name}
		}
		for run := range s.Runs {
			for i, b := range sc.brokers {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				cfg := loadgen.DefaultConfig()
				cfg.Conns, cfg.DevicesPerConn, cfg.Rate, cfg.Warmup, cfg.Duration = sc.conns, sc.devices, rate, sc.warmup, sc.duration
				cfg.Window, cfg.Batch, cfg.Burst = sc.window, sc.window, max(sc.burst, 1)
				cfg.Drain = b.hold + 2*time.Second
				cfg.Sub = b.sub
				cfg.Fences = fences
				cfg.Seed = uint64(run + 1)
				cfg.Tag = fmt.Sprintf("%s%d%c", sc.name[:2], run, 'a'+i)
				profile := ""
				if key := sc.name + "/" + b.kind; s.Profile != "" && !profiled[key] {
					switch {
					case sc.name == "ceiling" && b.kind == kindEdgefence:
						profile = s.Profile
					case sc.name == "ceiling" && b.kind == kindEngineOff:
						profile = s.Profile + ".off" // to diff against: go tool pprof -diff_base
					case b.kind == kindEdgefence:
						profile = s.Profile + "." + sc.name
					}
					profiled[key] = true
				}
				kind := b.kind
				if b.disk {
					kind += "-disk"
				}
				logPath := filepath.Join(s.Out, fmt.Sprintf("%s-%s-%d.log", sc.name, kind, run))
				res, err := s.runOne(ctx, b, cfg, fencesPath, logPath, profile)
				if err != nil {
					return fmt.Errorf("%s / %s run %d: %w", sc.name, b.name, run+1, err)
				}
				scRows[i].Runs = append(scRows[i].Runs, res)
				if s.Status != nil {
					s.Status.Add(1)
				}
				line, _ := json.Marshal(struct {
					Scenario string          `json:"scenario"`
					Broker   string          `json:"broker"`
					Run      int             `json:"run"`
					Result   *loadgen.Result `json:"result"`
				}{sc.name, b.name, run + 1, res})
				fmt.Fprintf(results, "%s\n", line)
				s.logf("%s / %s run %d: %.0f pings/s, %.2f µs CPU/ping, RSS %.0f MB, p99 %.1f ms, missing %d, unacked %d, loadgen %.2f cores",
					sc.name, b.name, run+1, res.PingsPerSec, res.CPUPerPingUs, res.RSSMaxMB, res.LatP99Ms, res.Missing, res.Unacked, res.LoadgenCores)
			}
		}
		if sc.name == "ceiling" && len(scRows) > 0 && scRows[0].Runs != nil {
			ceiling = median(scRows[0].values(func(r *loadgen.Result) float64 { return r.PingsPerSec }))
		}
		rows = append(rows, scRows...)
	}
	var table strings.Builder
	s.writeTable(&table, rows, time.Since(began))
	if err := os.WriteFile(filepath.Join(s.Out, "table.md"), []byte(table.String()), 0o644); err != nil {
		return err
	}
	var svg strings.Builder
	if err := s.writeChart(&svg, rows, time.Since(began)); err != nil {
		return err
	}
	chartPath := cmp.Or(s.Chart, filepath.Join(s.Out, "chart.svg"))
	if err := os.WriteFile(chartPath, []byte(svg.String()), 0o644); err != nil {
		return err
	}
	s.logf("chart in %s", chartPath)
	_, err = io.WriteString(w, table.String())
	return err
}

// runOne starts the broker, runs the load against it and stops it.
func (s *Suite) runOne(ctx context.Context, b brokerSpec, cfg loadgen.Config, fencesPath, logPath, profile string) (*loadgen.Result, error) {
	var (
		p   *process
		err error
	)
	switch b.kind {
	case kindEdgefence, kindEngineOff:
		dataDir := ""
		if b.disk {
			dataDir = filepath.Join(filepath.Dir(logPath), fmt.Sprintf("data-%s-%d", cfg.Tag, time.Now().UnixNano()))
			defer os.RemoveAll(dataDir)
		}
		p, err = s.startEdgefence(ctx, b, fencesPath, dataDir, logPath, profile != "")
	case kindMosquitto:
		p, err = s.startMosquitto(ctx, logPath, freeAddr)
	default:
		err = fmt.Errorf("unknown broker kind %q", b.kind)
	}
	if err != nil {
		return nil, fmt.Errorf("%s did not start (log %s): %w", b.kind, logPath, err)
	}
	defer p.stop()
	cfg.Addr = p.mqtt
	cfg.PID = p.cmd.Process.Pid
	if p.http != "" {
		cfg.MetricsURL = "http://" + p.http + "/metrics"
	}
	if profile != "" {
		cfg.OnMeasure = func() {
			s.fetchProfile("http://"+p.http+"/debug/pprof/profile?seconds=5", profile)
			s.fetchProfile("http://"+p.http+"/debug/pprof/heap", profile+".heap")
		}
	}
	return loadgen.Run(ctx, cfg)
}

// serveArgv is the command line of an edgefence broker under test: its
// listeners on loopback port 0 (startEdgefence reads the ports from its
// log), the bench's fences, no rate limit (the load is the limit under
// test), no speed gate (the load's devices cross their fence's edge in
// 50–100 m jumps a few hundred milliseconds apart, which the gate would
// set aside, and the bench measures the transitions' cost) and the log at
// info, which is quiet after the start.
func (s *Suite) serveArgv(b brokerSpec, fencesPath, dataDir string, pprof bool) []string {
	argv := []string{s.Bin, "serve", "--mqtt-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--fences", fencesPath,
		"--rate", "0", "--speed-gate", "0", "--hold", b.hold.String(), "--log-level", "info", "--close-timeout", "5s",
		"--data-dir", dataDir}
	if b.kind == kindEngineOff {
		argv = append(argv, "--engine=off")
	}
	if pprof {
		argv = append(argv, "--pprof")
	}
	return argv
}

func (s *Suite) fetchProfile(url, path string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.logf("profile: %v", err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		s.logf("profile: %v", err)
		return
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		s.logf("profile: %v", err)
	}
	s.logf("CPU profile written to %s", path)
}

// mosquittoConf is Mosquitto 2 set up like the edgefence under test:
// loopback, anonymous, no persistence, TCP_NODELAY, and queues deep
// enough that the one subscriber is not the limit.
func mosquittoConf(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	return fmt.Sprintf(`listener %s %s
allow_anonymous true
persistence false
max_connections -1
max_queued_messages 8192
max_inflight_messages 1024
set_tcp_nodelay true
log_dest stderr
log_type error
log_type warning
`, port, host)
}

func (r *Row) values(f func(*loadgen.Result) float64) []float64 {
	v := make([]float64, len(r.Runs))
	for i, x := range r.Runs {
		v[i] = f(x)
	}
	return v
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// mmm formats min/median/max.
func mmm(v []float64, prec int) string {
	if len(v) == 0 {
		return "–"
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', prec, 64) }
	return f(slices.Min(v)) + " / **" + f(median(v)) + "** / " + f(slices.Max(v))
}

func sum(v []float64) float64 {
	t := 0.0
	for _, x := range v {
		t += x
	}
	return t
}

func (s *Suite) writeTable(w io.Writer, rows []*Row, took time.Duration) {
	fmt.Fprintf(w, "\n%d runs per row, min / **median** / max; broker pinned to CPU %q, loadgen to the other (scripts/bench); whole suite %v\n\n",
		s.Runs, s.BrokerCPU, took.Round(time.Second))
	fmt.Fprintln(w, "| scenario | broker | pings/s | broker CPU µs/ping | broker cores | GC share | allocs/ping | RSS MB | e2e p50 ms | e2e p99 ms | e2e max ms | transitions expected / received | shed+refused, unacked | loadgen cores |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		get := func(f func(*loadgen.Result) float64) []float64 { return r.values(f) }
		lat := func(f func(*loadgen.Result) float64) string {
			if sum(get(func(x *loadgen.Result) float64 { return float64(x.Matched) })) == 0 {
				return "–"
			}
			return mmm(get(f), 1)
		}
		gc := "–"
		if g := get(func(x *loadgen.Result) float64 { return x.GCShare }); slices.Min(g) >= 0 {
			gc = fmt.Sprintf("%.1f%%", 100*median(g))
		}
		allocs := "–"
		if a := get(func(x *loadgen.Result) float64 { return x.AllocsPerPing }); slices.Min(a) >= 0 {
			allocs = fmt.Sprintf("%.1f", median(a))
		}
		tr := "–"
		if strings.HasPrefix(r.Runs[0].Config.Sub, "geofence") && !strings.Contains(r.Broker, "off") && !strings.Contains(r.Broker, "mosquitto") {
			tr = fmt.Sprintf("%.0f / %.0f", sum(get(func(x *loadgen.Result) float64 { return float64(x.Expected) })),
				sum(get(func(x *loadgen.Result) float64 { return float64(x.Matched) })))
		} else if strings.HasPrefix(r.Runs[0].Config.Sub, "devices") {
			tr = fmt.Sprintf("%.0f / %.0f (pings)", sum(get(func(x *loadgen.Result) float64 { return float64(x.Expected) })),
				sum(get(func(x *loadgen.Result) float64 { return float64(x.Matched) })))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %.0f, %.0f | %s |\n",
			r.Scenario, r.Broker,
			mmm(get(func(x *loadgen.Result) float64 { return x.PingsPerSec }), 0),
			mmm(get(func(x *loadgen.Result) float64 { return x.CPUPerPingUs }), 2),
			mmm(get(func(x *loadgen.Result) float64 { return x.BrokerCores }), 2),
			gc, allocs,
			mmm(get(func(x *loadgen.Result) float64 { return x.RSSMaxMB }), 0),
			lat(func(x *loadgen.Result) float64 { return x.LatP50Ms }),
			lat(func(x *loadgen.Result) float64 { return x.LatP99Ms }),
			lat(func(x *loadgen.Result) float64 { return x.LatMaxMs }),
			tr,
			sum(get(func(x *loadgen.Result) float64 { return x.ShedTotal() })),
			sum(get(func(x *loadgen.Result) float64 { return float64(x.Unacked) })),
			mmm(get(func(x *loadgen.Result) float64 { return x.LoadgenCores }), 2))
	}
	s.writeRatios(w, rows)
}

func (s *Suite) writeRatios(w io.Writer, rows []*Row) {
	find := func(scenario, broker string) *Row {
		for _, r := range rows {
			if r.Scenario == scenario && strings.HasPrefix(r.Broker, broker) {
				return r
			}
		}
		return nil
	}
	med := func(r *Row, f func(*loadgen.Result) float64) float64 { return median(r.values(f)) }
	pps := func(x *loadgen.Result) float64 { return x.PingsPerSec }
	cpu := func(x *loadgen.Result) float64 { return x.CPUPerPingUs }
	fmt.Fprintln(w, "\nRatios of medians, and the bars:")
	fmt.Fprintln(w)
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "NOT met"
	}
	if on, off := find("ceiling", "edgefence (engine on)"), find("ceiling", "edgefence --engine=off"); on != nil && off != nil {
		ratio := med(on, pps) / med(off, pps)
		fmt.Fprintf(w, "- ceiling, 1,000 connections unthrottled: engine on ÷ engine off throughput = **%.2f×** (bar ≥ 0.8×: %s); CPU per ping %.2f×\n",
			ratio, verdict(ratio >= 0.8), med(on, cpu)/med(off, cpu))
		if m := find("ceiling", "mosquitto, sub"); m != nil {
			fmt.Fprintf(w, "- ceiling: edgefence ÷ Mosquitto routing to a devices/# subscriber = %.2f× throughput\n", med(on, pps)/med(m, pps))
		}
		if m := find("ceiling", "mosquitto, no"); m != nil {
			fmt.Fprintf(w, "- ceiling: engine off ÷ Mosquitto without subscriber traffic = %.2f× throughput (mochi vs Mosquitto, ingest only)\n", med(off, pps)/med(m, pps))
		}
		if d := find("ceiling", "edgefence with --data-dir"); d != nil {
			r := med(d, cpu) / med(on, cpu)
			fmt.Fprintf(w, "- ceiling: edgefence with --data-dir (serve's default) ÷ in memory = %.2f× throughput, **%.2f×** CPU per ping (bar ≤ 1.3×: %s)\n",
				med(d, pps)/med(on, pps), r, verdict(r <= 1.3))
		}
	}
	if on := find("paced", "edgefence (engine on)"); on != nil {
		if m := find("paced", "mosquitto, sub"); m != nil {
			mb := find("paced", "mosquitto, no")
			cpuVs := func(label string, r *Row) {
				fmt.Fprintf(w, "- paced 50k pings/s, 10,000 connections: CPU per ping %s %.2f µs vs Mosquitto (routing to devices/#) %.2f µs = **%.2f×**",
					label, med(r, cpu), med(m, cpu), med(r, cpu)/med(m, cpu))
				if mb != nil {
					fmt.Fprintf(w, "; vs Mosquitto ingest only %.2f µs = %.2f×", med(mb, cpu), med(r, cpu)/med(mb, cpu))
				}
				fmt.Fprintln(w)
			}
			cpuVs("edgefence", on)
		}
		if off := find("paced", "edgefence --engine=off"); off != nil {
			r := med(on, cpu) / med(off, cpu)
			fmt.Fprintf(w, "- paced: engine on ÷ engine off CPU per ping = **%.2f×** (bar ≤ 1.25×: %s)\n", r, verdict(r <= 1.25))
		}
		rssBar := func(label string, r *Row) {
			rss := slices.Max(r.values(func(x *loadgen.Result) float64 { return x.RSSMaxMB }))
			fmt.Fprintf(w, "- paced: %s RSS with 10,000 trackers under load, worst run %.0f MB (bar ≤ 400 MB: %s)\n", label, rss, verdict(rss <= 400))
		}
		rssBar("edgefence", on)
		rate := med(on, pps)
		missing := sum(on.values(func(x *loadgen.Result) float64 { return float64(x.Missing) }))
		dropped := 0.0
		for _, x := range on.Runs {
			dropped += x.Shed[`edgefence_shed_total{stage="subscriber"}`] + x.Shed[`edgefence_shed_total{stage="subscriber_inflight"}`]
		}
		fmt.Fprintf(w, "- paced: sustained %.0f pings/s (target 50,000); the geofence/# dashboard missed %.0f transitions, %.0f dropped by its queue or inflight limit (bar: none missed: %s)\n",
			rate, missing, dropped, verdict(missing == 0 && dropped == 0 && rate >= 0.98*50000))
	}
	for _, sc := range []struct{ name, load string }{
		{"latency", "50% of the ceiling, its writes of 8"},
		{"overload", "50% of the ceiling, one ping a write"},
		{"headroom", "10% of the ceiling, one ping a write"},
	} {
		for _, name := range []string{"edgefence (engine on)", "edgefence --hold 0"} {
			r := find(sc.name, name)
			if r == nil {
				continue
			}
			hold := 500.0
			if strings.Contains(name, "hold 0") {
				hold = 0
			}
			p99 := median(r.values(func(x *loadgen.Result) float64 { return x.LatP99Ms }))
			cores := median(r.values(func(x *loadgen.Result) float64 { return x.BrokerCores }))
			v := verdict(p99 <= hold+5)
			if sc.name == "overload" {
				v = "not the bar's load: the same rate costs more than the core one ping a write"
			}
			fmt.Fprintf(w, "- latency at %s (%.0f pings/s, broker %.2f cores), %s: p99 %.1f ms vs hold + 5 ms = %.0f ms: %s\n",
				sc.load, r.Runs[0].Config.Rate, cores, name, p99, hold+5, v)
		}
	}
}
