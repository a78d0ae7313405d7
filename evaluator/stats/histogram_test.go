package stats

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

func TestHistogramExposesCumulativeBuckets(t *testing.T) {
	set := metrics.NewSet()
	h := NewHistogram(set, "x_seconds", []float64{.1, .5})
	for _, d := range []time.Duration{-time.Second, 50 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond, 2 * time.Second} {
		h.Observe(d)
	}
	var b bytes.Buffer
	set.WritePrometheus(&b)
	want := "x_seconds_bucket{le=\"0.1\"} 3\nx_seconds_bucket{le=\"0.5\"} 4\nx_seconds_bucket{le=\"+Inf\"} 5\nx_seconds_sum 1.45\nx_seconds_count 5\n"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("exposition:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestHistogramCountsConcurrentObservations(t *testing.T) {
	h := NewHistogram(metrics.NewSet(), "y_seconds", LatencyBuckets)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				h.Observe(time.Duration(i) * time.Millisecond)
			}
		}()
	}
	wg.Wait()
	if n := h.Count(); n != 4000 {
		t.Fatalf("count = %d, want 4000", n)
	}
}
