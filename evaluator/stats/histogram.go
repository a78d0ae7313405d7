// Package stats is the engine's Prometheus handles (Metrics), created
// once so that the per-ping path only does atomic adds, and the
// lock-free duration Histogram they and the publishers observe with.
package stats

import (
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Histogram is a Prometheus histogram of durations that observes with two
// atomic adds and no lock: VictoriaMetrics' histograms take a mutex per
// update, and the engine observes two or three per ping from every shard.
type Histogram struct {
	name    string
	bounds  []time.Duration
	labels  []string // rendered "le" values
	buckets []atomic.Uint64
	sum     atomic.Int64 // nanoseconds
}

// NewHistogram registers a histogram named name (with the _seconds unit
// in its name) in set, with the given upper bounds in seconds.
func NewHistogram(set *metrics.Set, name string, bounds []float64) *Histogram {
	h := &Histogram{name: name, buckets: make([]atomic.Uint64, len(bounds)+1)}
	for _, b := range bounds {
		h.bounds = append(h.bounds, time.Duration(b*float64(time.Second)))
		h.labels = append(h.labels, strconv.FormatFloat(b, 'g', -1, 64))
	}
	set.RegisterMetricsWriter(h.write)
	return h
}

// Observe records one duration. Negative values count in the first bucket.
func (h *Histogram) Observe(d time.Duration) {
	i := 0
	for i < len(h.bounds) && d > h.bounds[i] {
		i++
	}
	h.buckets[i].Add(1)
	h.sum.Add(int64(d))
}

// Bucket returns the index of d's bucket, for AddCounts.
func (h *Histogram) Bucket(d time.Duration) int {
	i := 0
	for i < len(h.bounds) && d > h.bounds[i] {
		i++
	}
	return i
}

// AddCounts adds observations gathered elsewhere: counts[i] to bucket i
// (len(counts) is one more than the bounds), and sum to the sum.
func (h *Histogram) AddCounts(counts []uint64, sum time.Duration) {
	for i, n := range counts {
		if n > 0 {
			h.buckets[i].Add(n)
		}
	}
	h.sum.Add(int64(sum))
}

// Count returns how many durations were observed.
func (h *Histogram) Count() uint64 {
	var n uint64
	for i := range h.buckets {
		n += h.buckets[i].Load()
	}
	return n
}

// write renders the Prometheus text exposition: cumulative buckets, sum
// in seconds, count.
func (h *Histogram) write(w io.Writer) {
	var cum uint64
	for i, le := range h.labels {
		cum += h.buckets[i].Load()
		fmt.Fprintf(w, "%s_bucket{le=%q} %d\n", h.name, le, cum)
	}
	cum += h.buckets[len(h.labels)].Load()
	fmt.Fprintf(w, "%s_bucket{le=\"+Inf\"} %d\n", h.name, cum)
	fmt.Fprintf(w, "%s_sum %g\n", h.name, time.Duration(h.sum.Load()).Seconds())
	fmt.Fprintf(w, "%s_count %d\n", h.name, cum)
}
