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
	Rows       []shadow.Row // one per strategy, in the order given: the raw scoring
	Observable []Observable // one per strategy: the scoring on what the fixes can show
	Faults     faults
	Pings      int64
	Truth      int64 // ground-truth transitions
	Ambiguous  int64 // …of them, of stays the fixes cannot show (observe.go)
	Wall       time.Duration
}

// Observable is a strategy's score on what the fixes can show, beside its
// raw score in Rows (docs/simulation.md, Scoring).
type Observable struct {
	Phantoms       int64 // emitted, unmatched, and explained by no ambiguous true event nor parking
	Missed         int64 // true transitions of observable stays, unmatched
	Excused        int64 // emitted, unmatched, explained by an ambiguous true event
	ParkedPhantoms int64 // emitted, unmatched, caused by a fix of a device standing parked
	FlipFlops      int64 // …of them, ENTER/EXIT pairs
}

func (o *Observable) add(v verdict) {
	o.Phantoms += v.phantoms
	o.Missed += v.missed
	o.Excused += v.excused
	o.ParkedPhantoms += v.parked
	o.FlipFlops += v.flips
}

// ParkedHours is how long devices stood parked at fence edges, in all.
func (r *Result) ParkedHours() float64 { return float64(r.Faults.ParkedNs) / float64(time.Hour) }

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
		"outlier_fixes":            f.Outliers,
		"parked_devices":           f.Parked,
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
		obs    []Observable
		faults faults
		pings  int64
		truth  int64
		hidden int64
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
			p.obs = make([]Observable, len(strategies))
			var (
				q        = fence.NewSearcher()
				clamp    = eng.Clamper()
				samples  []sample
				arrivals []engine.Ping
				arrAt    []int64
				trueAt   []int64
				tr       truthRun
				track    []sample
				mine     []event
				theirs   []event
				live     []event
				past     []event
				merged   []event
				dp       []int32
			)
			for i := w; i < cfg.Devices; i += workers {
				var dev device
				samples, dev = cfg.generate(i, Start, set.Fences(), samples, &p.faults)
				rule := ruleFor(&dev)
				tr.run(samples, set, q, eng.Dwell, rule)
				p.truth += int64(len(tr.events))
				for k := range tr.events {
					if tr.events[k].hidden {
						p.hidden++
					}
				}
				track = append(track[:0], samples...)
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
							past = append(past, event{fence: t.Fence, typ: t.Type, at: at})
						} else {
							live = append(live, event{fence: t.Fence, typ: t.Type, at: at})
						}
					}
					theirs = placeHistoric(live, past, &merged)
					mine = append(mine[:0], tr.events...)
					var sc score
					sc, dp = align(mine, theirs, int64(cfg.MatchEarly), int64(cfg.MatchLate), dp)
					p.scores[si].truth += sc.truth
					p.scores[si].emitted += sc.emitted
					p.scores[si].matched += sc.matched
					p.obs[si].add(rule.judge(mine, theirs, tr.hidden, track, &dev, set, int64(cfg.MatchEarly)))
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
		res.Ambiguous += p.hidden
		for si := range strategies {
			if w == 0 {
				res.Rows = append(res.Rows, shadow.Row{Stats: p.stats[si], HasTruth: true})
				res.Observable = append(res.Observable, Observable{})
			} else {
				res.Rows[si].Merge(&p.stats[si])
			}
			r := &res.Rows[si]
			sc := p.scores[si]
			r.Truth += sc.truth
			r.Matched += sc.matched
			r.Phantoms += sc.emitted - sc.matched
			r.Missed += sc.truth - sc.matched
			o, x := &res.Observable[si], &p.obs[si]
			o.add(verdict{x.Phantoms, x.Missed, x.Excused, x.ParkedPhantoms, x.FlipFlops})
		}
	}
	return res, nil
}
