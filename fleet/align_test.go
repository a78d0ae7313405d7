package fleet

import (
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
)

const sec = int64(time.Second)

func ev(fence string, typ engine.Type, s float64) event {
	return event{fence: fence, typ: typ, at: int64(s * float64(sec))}
}

func TestAlignCountsPhantomsAndMisses(t *testing.T) {
	E, X := engine.Enter, engine.Exit
	early, late := 5*sec, 900*sec
	for _, tc := range []struct {
		name            string
		truth, emitted  []event
		phantom, missed int64
	}{
		{"exact", []event{ev("a", E, 10), ev("a", X, 50)}, []event{ev("a", E, 10), ev("a", X, 50)}, 0, 0},
		{"phantom EXIT+ENTER pair inside a true stay is two phantoms",
			[]event{ev("a", E, 10), ev("a", X, 50)},
			[]event{ev("a", E, 10), ev("a", X, 20), ev("a", E, 21), ev("a", X, 50)}, 2, 0},
		{"a correct transition delayed by an outage is not a phantom",
			[]event{ev("a", E, 10), ev("a", X, 50)},
			[]event{ev("a", E, 10), ev("a", X, 400)}, 0, 0},
		{"a transition the engine never saw is missed",
			[]event{ev("a", E, 10), ev("a", X, 50), ev("b", E, 60)},
			[]event{ev("a", E, 10), ev("a", X, 50)}, 0, 1},
		{"an emitted transition far before the truth does not match",
			[]event{ev("a", E, 100)},
			[]event{ev("a", E, 10)}, 1, 1},
		{"fences are aligned separately",
			[]event{ev("a", E, 10), ev("b", E, 10)},
			[]event{ev("b", E, 10), ev("a", E, 11)}, 0, 0},
		{"the type must match", []event{ev("a", E, 10)}, []event{ev("a", X, 10)}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, _ := align(tc.truth, tc.emitted, early, late, nil)
			if p, m := sc.emitted-sc.matched, sc.truth-sc.matched; p != tc.phantom || m != tc.missed {
				t.Fatalf("phantoms %d missed %d, want %d %d", p, m, tc.phantom, tc.missed)
			}
		})
	}
}
