package fleet

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/shadow"
)

// Start is the simulation's virtual start instant (the server's clock).
// It carries a monotonic reading so that the engine's many instant
// subtractions take time.Time's fast path; only differences of it are
// used, so results do not depend on when the process started.
var Start = Monotonic(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))

// Monotonic returns t with a monotonic clock reading attached: the wall
// time is t's exactly, and instants derived from it with Add subtract
// without the wall-clock overflow checks.
func Monotonic(t time.Time) time.Time {
	now := time.Now()
	return now.Add(t.Sub(now))
}

// Result is a simulation's outcome.
type Result struct {
	Rows   []shadow.Row // one per strategy, in the order given
	Faults faults
	Pings  int64
	Truth  int64 // ground-truth transitions
	Wall   time.Duration
}

// Faults returns what was injected, as the report prints it.
func (r *Result) FaultCounts() map[string]int64 {
	f := &r.Faults
	return map[string]int64{
		"clock_steps":              f.Steps,
		"cold_boot_pings":          f.BootPings,
		"outages":                  f.Outages,
		"outages_newest_first":     f.NewestFirstBacklogs,
		"backlog_pings":            f.BacklogPings,
		"reordered_pings":          f.Reordered,
		"delayed_over_500ms_pings": f.DelayedPastHold,
	}
}

// Run simulates the fleet and evaluates its stream under every strategy
// on workers goroutines. eng is the engine configuration (its Hold is
// replaced per strategy). observe, when not nil, sees each device's
// arrivals (in arrival order) from the worker goroutines, e.g. to capture
// them; it must be safe for concurrent use.
func Run(cfg Config, eng engine.Config, set *fence.Set, strategies []shadow.Strategy, workers int, observe func([]engine.Ping)) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if workers < 1 {
		workers = 1
	}
	begin := time.Now()
	type part struct {
		stats  []shadow.Stats
		scores []score
		faults faults
		pings  int64
		truth  int64
		err    error
	}
	parts := make([]part, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := &parts[w]
			runner, err := shadow.NewRunner(eng, set, strategies, Start)
			if err != nil {
				p.err = err
				return
			}
			p.scores = make([]score, len(strategies))
			var (
				q        = fence.NewSearcher()
				clamp    = eng.Clamper()
				samples  []sample
				arrivals []engine.Ping
				arrAt    []int64
				trueAt   []int64
				truthEv  []event
				tstate   []truthState
				mine     []event
				theirs   []event
				live     []event
				past     []event
				merged   []event
				dp       []int32
			)
			for i := w; i < cfg.Devices; i += workers {
				samples = cfg.generate(i, Start, samples, &p.faults)
				truthEv, tstate = truth(samples, set, q, eng.Dwell, truthEv, tstate)
				p.truth += int64(len(truthEv))
				byArrival(samples)
				id := fmt.Sprintf("dev-%06d", i)
				arrivals, arrAt, trueAt = arrivals[:0], arrAt[:0], trueAt[:0]
				for k := range samples {
					s := &samples[k]
					pos := payload.Position{Lat: s.rlat, Lon: s.rlon, Acc: s.acc, HasAcc: s.acc > 0, TsNs: s.stamp, HasTs: true}
					arrivals = append(arrivals, engine.NewPing(clamp, id, &pos, Start.Add(time.Duration(s.arrival))))
					arrAt = append(arrAt, s.arrival)
					trueAt = append(trueAt, s.at)
				}
				p.pings += int64(len(arrivals))
				if observe != nil {
					observe(arrivals)
				}
				outs := runner.Device(arrivals)
				for si, out := range outs {
					live, past = live[:0], past[:0]
					for k := range out {
						t := &out[k]
						at := int64(t.Decided.Sub(Start)) // a timer DWELL: the server's clock is true time
						if !t.Timer {
							ing := int64(t.Ingest.Sub(Start))
							if j := sort.Search(len(arrAt), func(j int) bool { return arrAt[j] >= ing }); j < len(arrAt) {
								at = trueAt[j]
							}
						}
						if t.Historic {
							past = append(past, event{t.Fence, t.Type, at})
						} else {
							live = append(live, event{t.Fence, t.Type, at})
						}
					}
					theirs = placeHistoric(live, past, &merged)
					mine = append(mine[:0], truthEv...)
					var sc score
					sc, dp = align(mine, theirs, int64(cfg.MatchEarly), int64(cfg.MatchLate), dp)
					p.scores[si].truth += sc.truth
					p.scores[si].emitted += sc.emitted
					p.scores[si].matched += sc.matched
				}
			}
			p.stats = runner.Stats()
		}()
	}
	wg.Wait()
	res := &Result{Wall: time.Since(begin)}
	for w := range parts {
		p := &parts[w]
		if p.err != nil {
			return nil, p.err
		}
		res.Faults.add(&p.faults)
		res.Pings += p.pings
		res.Truth += p.truth
		for si := range strategies {
			if w == 0 {
				res.Rows = append(res.Rows, shadow.Row{Stats: p.stats[si], HasTruth: true})
			} else {
				res.Rows[si].Merge(&p.stats[si])
			}
			r := &res.Rows[si]
			sc := p.scores[si]
			r.Truth += sc.truth
			r.Matched += sc.matched
			r.Phantoms += sc.emitted - sc.matched
			r.Missed += sc.truth - sc.matched
		}
	}
	return res, nil
}
