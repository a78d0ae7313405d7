package loadgen

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/edgefence/edgefence/loadgen/probe"
)

// Summary is what a result says about the run that made it.
type Summary struct {
	Conns          int     `json:"conns"`
	DevicesPerConn int     `json:"devices_per_conn"`
	QoS            byte    `json:"qos"`
	Rate           float64 `json:"rate"`            // 0: unthrottled
	Burst          int     `json:"burst,omitempty"` // paced: pings per write
	Window         int     `json:"window"`
	Fences         int     `json:"fences"`
	CrossEvery     int     `json:"cross_every"`
	Sub            string  `json:"sub"`
	Tag            string  `json:"tag"`
}

func summarize(c Config) Summary {
	return Summary{Conns: c.Conns, DevicesPerConn: c.DevicesPerConn, QoS: c.QoS, Rate: c.Rate, Burst: c.Burst, Window: c.Window,
		Fences: len(c.Fences), CrossEvery: c.CrossEvery, Sub: c.Sub, Tag: c.Tag}
}

// Result is one run's measurements. Rates, CPU and RSS are over the
// measured window; counts are over the whole run.
type Result struct {
	Config      Summary       `json:"config"`
	ConnectTime time.Duration `json:"connect_ns"`
	Window      time.Duration `json:"window_ns"`

	PingsPerSec float64 `json:"pings_per_sec"` // broker-side: accepted (received less refused and shed, from the metrics) or acknowledged
	PingsSource string  `json:"pings_source"`  // "metric", "acks" or "sent"
	SentPerSec  float64 `json:"sent_per_sec"`
	AckedPerSec float64 `json:"acked_per_sec"`

	BrokerCores   float64   `json:"broker_cores"`      // broker CPU time ÷ wall time
	CPUPerPingUs  float64   `json:"cpu_per_ping_us"`   // broker CPU µs per ping
	GCShare       float64   `json:"gc_share"`          // broker GC CPU ÷ broker CPU; -1 unknown
	AllocsPerPing float64   `json:"allocs_per_ping"`   // broker heap allocations per ping; -1 unknown
	RSSMaxMB      float64   `json:"rss_max_mb"`        // highest VmRSS sampled in the window
	RSSPeakMB     float64   `json:"rss_peak_mb"`       // VmHWM at the window's end
	LoadgenCores  float64   `json:"loadgen_cores"`     // this process's CPU ÷ wall time
	Goroutines    float64   `json:"broker_goroutines"` // -1 unknown
	CPUBusy       []float64 `json:"cpu_busy"`          // each CPU's busy share in the window, whoever used it

	Sent    int64 `json:"sent"`
	Acked   int64 `json:"acked"`
	Unacked int64 `json:"unacked"` // QoS 1 pings the broker never acknowledged (refused)

	Expected    int64 `json:"expected_transitions"` // pings sent in the window that cause a transition
	Matched     int64 `json:"matched"`              // of those, received by the subscriber
	Missing     int64 `json:"missing"`              // of those, never received
	Unmatched   int64 `json:"unmatched"`            // transitions received that no marked ping explains
	SubMessages int64 `json:"sub_messages"`         // everything the subscriber received live

	LatP50Ms float64 `json:"latency_p50_ms"`
	LatP99Ms float64 `json:"latency_p99_ms"`
	LatMaxMs float64 `json:"latency_max_ms"`
	// LatReceipt is the instant a transition counts as received: "kernel",
	// when it reached the subscriber's socket (SO_TIMESTAMPNS), or "read",
	// when the subscriber read it.
	LatReceipt string `json:"latency_receipt,omitempty"`

	Shed map[string]float64 `json:"shed,omitempty"` // the broker's shed/refused/dropped counters at the end

	WriteErrors int64  `json:"write_errors"`
	ReadErrors  int64  `json:"read_errors"`
	FirstError  string `json:"first_error,omitempty"`
}

// Counters whose totals a result reports.
var shedMetrics = []string{
	`edgefence_shed_total{stage="queue"}`,
	`edgefence_shed_total{stage="subscriber"}`,
	`edgefence_shed_total{stage="subscriber_inflight"}`,
	`edgefence_shed_total{stage="side_output"}`,
	`edgefence_refused_total{reason="queue_full"}`,
	`edgefence_queue_full_total`,
	`edgefence_buffer_overflow_total`,
	`edgefence_late_total`,
}

func (res *Result) window(s0, s1 snapshot, rssMax int64) {
	dt := s1.at.Sub(s0.at)
	res.Window = dt
	sec := dt.Seconds()
	res.SentPerSec = float64(s1.sent-s0.sent) / sec
	res.AckedPerSec = float64(s1.acked-s0.acked) / sec
	pings := float64(s1.sent - s0.sent)
	res.PingsSource = "sent"
	if res.Config.QoS > 0 {
		pings, res.PingsSource = float64(s1.acked-s0.acked), "acks"
	}
	const received = `edgefence_pings_received_total`
	if s0.metricOK && s1.metricOK && s0.broker.Has(received) {
		// Accepted: received less what was refused or shed at a full
		// engine queue.
		d := func(k string) float64 { return s1.broker[k] - s0.broker[k] }
		pings = d(received) - d(`edgefence_refused_total{reason="queue_full"}`) - d(`edgefence_shed_total{stage="queue"}`)
		res.PingsSource = "metric"
	}
	res.PingsPerSec = pings / sec
	res.GCShare, res.AllocsPerPing, res.Goroutines = -1, -1, -1
	if s0.procErr == nil && s1.procErr == nil && s1.proc.CPU > 0 {
		cpu := (s1.proc.CPU - s0.proc.CPU).Seconds()
		res.BrokerCores = cpu / sec
		if pings > 0 {
			res.CPUPerPingUs = cpu / pings * 1e6
		}
		const gc = `go_gc_cpu_seconds_total`
		if s0.metricOK && s1.metricOK && s0.broker.Has(gc) && cpu > 0 {
			res.GCShare = (s1.broker[gc] - s0.broker[gc]) / cpu
		}
		res.RSSMaxMB = float64(max(rssMax, s1.proc.RSS)) / (1 << 20)
		res.RSSPeakMB = float64(s1.proc.HWM) / (1 << 20)
	}
	const mallocs = `go_memstats_mallocs_total`
	if s0.metricOK && s1.metricOK && s0.broker.Has(mallocs) && pings > 0 {
		res.AllocsPerPing = (s1.broker[mallocs] - s0.broker[mallocs]) / pings
	}
	if s1.metricOK && s1.broker.Has(`go_goroutines`) {
		res.Goroutines = s1.broker[`go_goroutines`]
	}
	res.LoadgenCores = (s1.self.CPU - s0.self.CPU).Seconds() / sec
	res.CPUBusy = probe.BusyShares(s0.cpus, s1.cpus)
}

func (res *Result) fillTotals(m probe.Metrics) {
	for _, k := range shedMetrics {
		if v, ok := m[k]; ok {
			if res.Shed == nil {
				res.Shed = map[string]float64{}
			}
			res.Shed[k] = v
		}
	}
}

func (res *Result) setLatency(lat []int64) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	res.LatP50Ms = ms(quantile(lat, 0.50))
	res.LatP99Ms = ms(quantile(lat, 0.99))
	res.LatMaxMs = ms(lat[len(lat)-1])
}

// quantile of a sorted slice, nearest rank.
func quantile(s []int64, q float64) int64 {
	i := int(q*float64(len(s)) + 0.5)
	return s[min(max(i-1, 0), len(s)-1)]
}

// ShedTotal is the sum of the shed, refused and dropped counters.
func (res *Result) ShedTotal() float64 {
	var n float64
	for k, v := range res.Shed {
		if strings.Contains(k, "shed_total") || strings.Contains(k, "refused_total") {
			n += v
		}
	}
	return n
}

// Print writes the result for a person.
func (res *Result) Print(w io.Writer) {
	c := res.Config
	fmt.Fprintf(w, "run %s: %d connections × %d devices, QoS %d, %s, window %d, %d fences, 1/%d pings cross, subscriber %q\n",
		c.Tag, c.Conns, c.DevicesPerConn, c.QoS, rateString(c.Rate, c.Burst), c.Window, c.Fences, c.CrossEvery, c.Sub)
	fmt.Fprintf(w, "  connected in %v; measured over %v\n", res.ConnectTime.Round(time.Millisecond), res.Window.Round(time.Millisecond))
	fmt.Fprintf(w, "  broker pings/s      %10.0f  (from %s; sent %.0f/s, acked %.0f/s)\n", res.PingsPerSec, res.PingsSource, res.SentPerSec, res.AckedPerSec)
	if res.BrokerCores > 0 {
		fmt.Fprintf(w, "  broker CPU          %10.2f µs/ping  (%.2f cores", res.CPUPerPingUs, res.BrokerCores)
		if res.GCShare >= 0 {
			fmt.Fprintf(w, ", GC %.1f%%", 100*res.GCShare)
		}
		if res.AllocsPerPing >= 0 {
			fmt.Fprintf(w, ", %.1f allocs/ping", res.AllocsPerPing)
		}
		fmt.Fprintf(w, ")\n  broker RSS          %10.1f MB max in window (peak %.1f MB)\n", res.RSSMaxMB, res.RSSPeakMB)
	}
	fmt.Fprintf(w, "  loadgen CPU         %10.2f cores; CPUs busy (anyone) %s\n", res.LoadgenCores, percents(res.CPUBusy))
	fmt.Fprintf(w, "  pings               sent %d, acked %d, unacked %d\n", res.Sent, res.Acked, res.Unacked)
	if c.Sub != "" {
		fmt.Fprintf(w, "  subscriber          %d messages; expected %d, matched %d, missing %d, unmatched %d\n",
			res.SubMessages, res.Expected, res.Matched, res.Missing, res.Unmatched)
		if res.Matched > 0 {
			fmt.Fprintf(w, "  e2e latency         p50 %.2f ms, p99 %.2f ms, max %.2f ms  (received: %s)\n", res.LatP50Ms, res.LatP99Ms, res.LatMaxMs, receiptString(res.LatReceipt))
		}
	}
	if len(res.Shed) > 0 {
		keys := make([]string, 0, len(res.Shed))
		for k := range res.Shed {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fmt.Fprintf(w, "  broker counters    ")
		for _, k := range keys {
			fmt.Fprintf(w, " %s=%.0f", strings.TrimPrefix(k, "edgefence_"), res.Shed[k])
		}
		fmt.Fprintln(w)
	}
	if res.WriteErrors+res.ReadErrors > 0 {
		fmt.Fprintf(w, "  errors              %d write, %d read; first: %s\n", res.WriteErrors, res.ReadErrors, res.FirstError)
	}
}

func percents(v []float64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf("%.0f%%", 100*x)
	}
	return strings.Join(s, " ")
}

func receiptString(r string) string {
	if r == "kernel" {
		return "the socket's kernel timestamp"
	}
	return "when read"
}
