package fleet

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/shadow"
)

// diagnosticRunner makes what the fleet diagnostics run devices through,
// as Run does: cfg's 300 fences and a shadow runner of strategies on the
// engine's defaults.
func diagnosticRunner(t *testing.T, cfg *Config, strategies []shadow.Strategy) (engine.Config, *fence.Set, *shadow.Runner) {
	t.Helper()
	eng := engine.DefaultConfig()
	set, err := cfg.Fences(300)
	if err != nil {
		t.Fatal(err)
	}
	runner, err := shadow.NewRunner(eng, set, strategies, Start)
	if err != nil {
		t.Fatal(err)
	}
	return eng, set, runner
}

// arrivalsOf returns device i's samples, in their order, as the pings the
// broker takes when they arrive.
func arrivalsOf(clamp clock.Clamper, i int, samples []sample) []engine.Ping {
	id := fmt.Sprintf("dev-%06d", i)
	var arrivals []engine.Ping
	for k := range samples {
		s := &samples[k]
		pos := payload.Position{Lat: s.rlat, Lon: s.rlon, Acc: s.acc, HasAcc: s.acc > 0, TsNs: s.stamp, HasTs: true}
		arrivals = append(arrivals, engine.NewPing(clamp, id, &pos, Start.Add(time.Duration(s.arrival))))
	}
	return arrivals
}

// causeOf returns the true instant of tr and the index of the sample that
// caused it, samples being in arrival order: a ping's transition is at
// its ping's true instant; a timer's (cause -1) at its decision, the
// server's clock being true time.
func causeOf(samples []sample, tr *engine.Transition) (at int64, cause int) {
	at, cause = int64(tr.Decided.Sub(Start)), -1
	if !tr.Timer {
		ing := int64(tr.Ingest.Sub(Start))
		if j := sort.Search(len(samples), func(j int) bool { return samples[j].arrival >= ing }); j < len(samples) {
			at, cause = samples[j].at, j
		}
	}
	return at, cause
}

// trueEvents returns the true transitions of samples (in true-time order).
func trueEvents(samples []sample, set *fence.Set, dwell time.Duration) []event {
	var tr truthRun
	tr.run(samples, set, fence.NewSearcher(), dwell, observable{fixes: minFixes})
	return tr.events
}
