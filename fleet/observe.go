package fleet

import (
	"sort"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
)

// observable is the rule that separates what a device's fixes can show
// from what they cannot (docs/simulation.md, Scoring). A true stay is
// observable when the true track is at least margin (2 σ of the device's
// error) inside for at least fixes consecutive fixes (3, or 3 s of fixes
// when that is more); the others are ambiguous, and so is a true pass
// outside that comes within margin of the edge without crossing it.
type observable struct {
	margin float64 // metres
	fixes  int
}

// Sigmas and minFixes are the rule's constants: 2 σ, 3 fixes or 3 s.
const (
	sigmas   = 2
	minFixes = 3
	minSpan  = 3 * time.Second
)

// ruleFor returns the rule for d's receiver and report rate.
func ruleFor(d *device) observable {
	n := minFixes
	if d.period > 0 {
		n = max(n, int((int64(minSpan)+d.period-1)/d.period))
	}
	return observable{margin: sigmas * d.sigma, fixes: n}
}

// deeper counts true fix s of a stay in f: run is the stay's run of
// consecutive deep fixes so far; shown whether it now makes the stay
// observable.
func (o observable) deeper(run int, f *fence.Fence, s *sample) (next int, shown bool) {
	if o.margin > 0 && f.EdgeDistance(s.lat, s.lon) < o.margin {
		return 0, false
	}
	return run + 1, run+1 >= o.fixes
}

// verdict is a device's score on the observable measure, beside the raw one.
type verdict struct {
	phantoms int64 // unmatched emitted that no ambiguous true event explains
	missed   int64 // unmatched true transitions of observable stays
	excused  int64 // unmatched emitted that an ambiguous true event explains
	parked   int64 // unmatched emitted caused by a fix while the device stood parked
	flips    int64 // …of them, ENTER/EXIT pairs (an odd one counts as a pair)
}

// judge scores a device's aligned transitions (align has marked the
// matched ones and grouped both by fence, each group in order). An
// unmatched emitted transition is, in this order: parked, when its fix
// was taken while the device stood at its parking spot (scored apart,
// as flip-flops); excused, when it closes the phantom stay or gap an
// excused one opened, or when its fix was taken within early of a hidden
// stay of its fence or of an ambiguous pass; otherwise a phantom. track
// is the device's true samples in true-time order.
func (o observable) judge(truth, emitted []event, hidden []window, track []sample, d *device, set *fence.Set, early int64) verdict {
	var v verdict
	for i := range truth {
		if !truth[i].matched && !truth[i].hidden {
			v.missed++
		}
	}
	const (
		none = iota
		inStay
		inGap
	)
	carry, fenceID, flips := none, "", int64(0)
	for i := range emitted {
		e := &emitted[i]
		if e.fence != fenceID {
			carry, fenceID = none, e.fence
		}
		switch {
		case e.matched:
			carry = none
		case d.parked(e.at):
			v.parked++
			if e.typ != engine.Dwell {
				flips++
			}
			carry = none
		case carry == inStay && e.typ != engine.Enter, carry == inGap && e.typ == engine.Enter:
			v.excused++
			if e.typ != engine.Dwell {
				carry = none
			}
		case o.ambiguous(e, hidden, track, set, early):
			v.excused++
			carry = none
			switch e.typ {
			case engine.Enter:
				carry = inStay
			case engine.Exit:
				carry = inGap
			}
		default:
			v.phantoms++
			carry = none
		}
	}
	v.flips = (flips + 1) / 2
	return v
}

// ambiguous reports whether emitted transition e happened (its fix's true
// instant) within early of a hidden stay of its fence, or of an
// ambiguous pass: a stretch of true fixes outside the fence, each within
// the margin of its edge, that neither follows nor precedes a crossing.
func (o observable) ambiguous(e *event, hidden []window, track []sample, set *fence.Set, early int64) bool {
	for _, w := range hidden {
		if w.fence == e.fence && e.at >= w.from-early && e.at <= w.to+early {
			return true
		}
	}
	f := set.ByID(e.fence)
	if o.margin <= 0 || f == nil {
		return false
	}
	near := func(k int) bool {
		s := &track[k]
		return !f.Contains(s.lat, s.lon) && f.EdgeDistance(s.lat, s.lon) <= o.margin
	}
	k := sort.Search(len(track), func(k int) bool { return track[k].at >= e.at-early })
	for ; k < len(track) && track[k].at <= e.at+early; k++ {
		if !near(k) {
			continue
		}
		a, b := k, k
		for a > 0 && near(a-1) {
			a--
		}
		for b+1 < len(track) && near(b+1) {
			b++
		}
		s := &track[max(a-1, 0)]
		before := a == 0 || !f.Contains(s.lat, s.lon)
		s = &track[min(b+1, len(track)-1)]
		after := b == len(track)-1 || !f.Contains(s.lat, s.lon)
		if before && after {
			return true
		}
		k = b
	}
	return false
}
