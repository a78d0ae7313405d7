package shadow

import (
	"slices"
	"time"
)

// Stats are one strategy's totals over a stream.
type Stats struct {
	Strategy
	Pings       int64
	Late        int64 // arrived behind their device's committed history
	Lost        int64 // late and not reconciled: diverted to the late output
	Historic    int64 // transitions late pings revealed
	Overflow    int64 // released early because a buffer was full (not lost)
	Transitions int64
	Reversals   int64           // transitions undoing the previous ping's
	Latency     []time.Duration // commit − arrival, per ping-caused transition
	Elapsed     time.Duration   // engine time spent on this strategy
}

// Merge adds o's totals (the same strategy, another worker) to s.
func (s *Stats) Merge(o *Stats) {
	s.Pings += o.Pings
	s.Late += o.Late
	s.Lost += o.Lost
	s.Historic += o.Historic
	s.Overflow += o.Overflow
	s.Transitions += o.Transitions
	s.Reversals += o.Reversals
	s.Latency = append(s.Latency, o.Latency...)
	s.Elapsed += o.Elapsed
}

// Percentile returns the p-th percentile (0..100) of the added latency.
func (s *Stats) Percentile(p float64) time.Duration {
	if len(s.Latency) == 0 {
		return 0
	}
	if !slices.IsSorted(s.Latency) {
		slices.Sort(s.Latency)
	}
	i := int(p / 100 * float64(len(s.Latency)-1))
	return s.Latency[i]
}

// Mean returns the mean added latency.
func (s *Stats) Mean() time.Duration {
	if len(s.Latency) == 0 {
		return 0
	}
	var sum time.Duration
	for _, l := range s.Latency {
		sum += l
	}
	return sum / time.Duration(len(s.Latency))
}

// Rate returns n/d, or 0 when d is 0.
func Rate(n, d int64) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}
