package fleet

import (
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
)

// event is one transition on a common timeline: true time for the ground
// truth, the true time of the causing ping for what the engine emitted.
type event struct {
	fence string
	typ   engine.Type
	at    int64
}

// truthState is the ground truth's view of one fence.
type truthState struct {
	fence   *fence.Fence
	enter   int64
	dwelled bool
	seen    bool // touched by the current ping
}

// truth computes a device's true transitions: its true positions at true
// times, in order, through the same fence geometry and the same rules as
// the engine (DWELL once after the fence's dwell while continuously inside).
func truth(samples []sample, set *fence.Set, q *fence.Searcher, dwell time.Duration, out []event, st []truthState) ([]event, []truthState) {
	out, st = out[:0], st[:0]
	for i := range samples {
		s := &samples[i]
		hits := q.Contains(set, s.lat, s.lon)
		for k := range st {
			st[k].seen = false
		}
		for _, f := range hits {
			k := -1
			for j := range st {
				if st[j].fence == f {
					k = j
					break
				}
			}
			if k < 0 {
				st = append(st, truthState{fence: f, enter: s.at})
				out = append(out, event{f.ID, engine.Enter, s.at})
				k = len(st) - 1
			}
			st[k].seen = true
			dw := dwell
			if f.HasDwell {
				dw = f.Dwell
			}
			if !st[k].dwelled && dw > 0 && s.at >= st[k].enter+int64(dw) {
				st[k].dwelled = true
				out = append(out, event{f.ID, engine.Dwell, st[k].enter + int64(dw)})
			}
		}
		k := 0
		for _, x := range st {
			if x.seen {
				st[k] = x
				k++
			} else {
				out = append(out, event{x.fence.ID, engine.Exit, s.at})
			}
		}
		st = st[:k]
	}
	return out, st
}
