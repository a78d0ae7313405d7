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
	// matched: the alignment paired it (align). hidden: a true transition
	// of a stay the fixes cannot show (observe.go).
	matched, hidden bool
}

// window is a true stay in a fence that the device's fixes cannot show.
type window struct {
	fence    string
	from, to int64
}

// truthState is the ground truth's view of one fence.
type truthState struct {
	fence   *fence.Fence
	enter   int64
	first   int // index of its ENTER in the events
	deep    int // consecutive fixes at least the device's 2 σ inside
	shown   bool
	dwelled bool
	seen    bool // touched by the current ping
}

// truthRun computes a device's true transitions, and which of them the
// device's fixes can show; its slices are reused from device to device.
type truthRun struct {
	events []event
	state  []truthState
	hidden []window
}

// run computes a device's true transitions: its true positions at true
// times, in order, through the same fence geometry and the same rules as
// the engine (DWELL once after the fence's dwell while continuously
// inside). rule says which stays are observable; a stay that is not marks
// its transitions hidden and adds its window.
func (tr *truthRun) run(samples []sample, set *fence.Set, q *fence.Searcher, dwell time.Duration, rule observable) {
	out, st := tr.events[:0], tr.state[:0]
	tr.hidden = tr.hidden[:0]
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
				st = append(st, truthState{fence: f, enter: s.at, first: len(out)})
				out = append(out, event{fence: f.ID, typ: engine.Enter, at: s.at})
				k = len(st) - 1
			}
			x := &st[k]
			x.seen = true
			if !x.shown {
				x.deep, x.shown = rule.deeper(x.deep, f, s)
			}
			dw := dwell
			if f.HasDwell {
				dw = f.Dwell
			}
			if !x.dwelled && dw > 0 && s.at >= x.enter+int64(dw) {
				x.dwelled = true
				out = append(out, event{fence: f.ID, typ: engine.Dwell, at: x.enter + int64(dw)})
			}
		}
		k := 0
		for _, x := range st {
			if x.seen {
				st[k] = x
				k++
			} else {
				out = append(out, event{fence: x.fence.ID, typ: engine.Exit, at: s.at})
				tr.close(out, &x, s.at)
			}
		}
		st = st[:k]
	}
	var end int64 // a stay open at the end lasts past the last fix
	if len(samples) > 0 {
		end = samples[len(samples)-1].at + 1
	}
	for k := range st {
		tr.close(out, &st[k], end)
	}
	tr.events, tr.state = out, st
}

// close ends a stay at to: an unobservable one marks its transitions hidden.
func (tr *truthRun) close(out []event, x *truthState, to int64) {
	if x.shown {
		return
	}
	for k := x.first; k < len(out); k++ {
		if out[k].fence == x.fence.ID {
			out[k].hidden = true
		}
	}
	tr.hidden = append(tr.hidden, window{x.fence.ID, x.enter, to})
}
