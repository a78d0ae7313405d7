// Package shadow runs a stream of pings through the engine under several
// reorder strategies side by side, in virtual time, with the same
// evaluator.Processor that serve runs: the simulator and the replay tool
// both measure through it.
package shadow

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/stats"
)

// Strategy is one way to run the engine: a hold of 0 is arrival order.
type Strategy struct {
	Name string
	Hold time.Duration
	// Adaptive runs the per-device adaptive hold within the engine
	// configuration's bounds (Hold is then unused).
	Adaptive bool
	// NoAccuracy ignores the pings' accuracy: no fence edge hysteresis.
	NoAccuracy bool
}

// ParseStrategy reads one strategy: a hold ("500ms", 0 for arrival
// order) or "adaptive", optionally followed by "-noacc" to ignore the
// pings' accuracy.
func ParseStrategy(s string) (Strategy, error) {
	s = strings.TrimSpace(s)
	base, noacc := strings.CutSuffix(s, "-noacc")
	var st Strategy
	if base == "adaptive" {
		st = Strategy{Name: "adaptive", Adaptive: true}
	} else {
		h, err := time.ParseDuration(base)
		if err != nil {
			return Strategy{}, fmt.Errorf("strategy %q: want a hold or \"adaptive\", optionally with -noacc: %w", s, err)
		}
		st = Strategies([]time.Duration{h})[0]
	}
	if noacc {
		st.Name += "-noacc"
		st.NoAccuracy = true
	}
	return st, nil
}

// Strategies names holds: "arrival" for 0, "hold=500ms" otherwise.
func Strategies(holds []time.Duration) []Strategy {
	out := make([]Strategy, len(holds))
	for i, h := range holds {
		out[i] = Strategy{Name: "hold=" + h.String(), Hold: h}
		if h == 0 {
			out[i].Name = "arrival"
		}
	}
	return out
}

// Runner evaluates one device's stream at a time under every strategy.
// Devices are independent in the engine (each owns its buffer and state),
// so running them one by one gives the same transitions as interleaving
// them, with one device's data hot in cache. Not safe for concurrent use:
// run one Runner per goroutine and Merge their Stats.
type Runner struct {
	strategies []Strategy
	procs      []*evaluator.Processor
	metrics    []*stats.Metrics
	sinks      []*recorder
	sweep      time.Duration
	holdMax    time.Duration // the adaptive hold's bound
	stats      []Stats
}

// recorder keeps one device's output for one strategy.
type recorder struct {
	trans []engine.Transition
	late  int
}

func (r *recorder) Transition(t *engine.Transition) { r.trans = append(r.trans, *t) }
func (r *recorder) Late(*engine.Late)               { r.late++ }

// NewRunner builds a processor per strategy from cfg (its Hold is
// replaced by each strategy's). base is the origin of virtual time: any
// instant not far from the stream's.
func NewRunner(cfg engine.Config, fences *fence.Set, strategies []Strategy, base time.Time) (*Runner, error) {
	// Sweeps only evict (a silent device's DWELL timer is a deadline,
	// which advance serves at its instant); stepping through a
	// ten-minute outage every 250 ms would cost more than the pings.
	r := &Runner{strategies: strategies, sweep: max(cfg.Sweep, time.Second), holdMax: cfg.HoldMax}
	for _, s := range strategies {
		c := cfg
		c.Hold = s.Hold
		if s.Adaptive {
			c.Hold = engine.AdaptiveHold
		}
		if s.NoAccuracy {
			c.MaxAccuracy = 0
		}
		rec := &recorder{}
		m := stats.NewMetrics(nil)
		p, err := evaluator.NewProcessor(c, base, func() *fence.Set { return fences }, rec, m)
		if err != nil {
			return nil, fmt.Errorf("strategy %s: %w", s.Name, err)
		}
		r.procs = append(r.procs, p)
		r.metrics = append(r.metrics, m)
		r.sinks = append(r.sinks, rec)
		r.stats = append(r.stats, Stats{Strategy: s})
	}
	return r, nil
}

// Device runs one device's pings, in arrival order (each Ping's Ingest is
// its arrival instant), through every strategy, and returns each
// strategy's transitions for it. The slices are reused by the next call.
func (r *Runner) Device(arrivals []engine.Ping) [][]engine.Transition {
	out := make([][]engine.Transition, len(r.procs))
	if len(arrivals) == 0 {
		return out
	}
	for i, p := range r.procs {
		rec := r.sinks[i]
		rec.trans, rec.late = rec.trans[:0], 0
		start := time.Now()
		id := arrivals[0].Device
		prev := arrivals[0].Ingest
		for j := range arrivals {
			pg := arrivals[j]
			// A silent stretch (an outage) gets the sweeps a live shard
			// would run (eviction); its DWELL timer is a deadline.
			if pg.Ingest.Sub(prev) > r.sweep {
				for next := prev.Add(r.sweep); next.Before(pg.Ingest); next = next.Add(r.sweep) {
					r.advance(p, next)
					p.Sweep(next)
				}
			}
			prev = pg.Ingest
			r.advance(p, pg.Ingest)
			p.Ingest(&pg)
		}
		end := arrivals[len(arrivals)-1].Ingest.Add(r.maxHold(i))
		r.advance(p, end)
		p.Flush(end) // nothing should be left; a safety net for holds beyond the stream
		p.Forget(id)
		st := &r.stats[i]
		st.Elapsed += time.Since(start)
		st.Pings += int64(len(arrivals))
		st.Lost += int64(rec.late)
		for k := range rec.trans {
			t := &rec.trans[k]
			st.Transitions++
			if t.Historic {
				st.Historic++
			}
			if t.Reversal {
				st.Reversals++
			}
			if !t.Timer && !t.Historic {
				st.Latency = append(st.Latency, t.Decided.Sub(t.Ingest))
			}
		}
		out[i] = rec.trans
	}
	return out
}

// maxHold is the longest a ping may wait under strategy i.
func (r *Runner) maxHold(i int) time.Duration {
	if s := r.strategies[i]; !s.Adaptive {
		return s.Hold
	}
	return r.holdMax
}

// advance runs the hold deadlines due by now at their own instants, as a
// live shard's timer does, so that commit times are exact.
func (r *Runner) advance(p *evaluator.Processor, now time.Time) {
	for {
		next, ok := p.NextDeadline()
		if !ok || next.After(now) {
			break
		}
		p.Advance(next)
	}
	p.Advance(now)
}

// Stats returns the totals so far, one per strategy, with overflow counts
// from the engine's own metrics.
func (r *Runner) Stats() []Stats {
	out := slices.Clone(r.stats)
	for i := range out {
		out[i].Overflow = int64(r.metrics[i].Overflow.Get())
		out[i].Late = out[i].Lost + int64(r.metrics[i].Reconciled.Get())
		out[i].Latency = slices.Clone(out[i].Latency)
	}
	return out
}
