package fencegen

import "testing"

func TestWalkCrossesTheEdgeOncePerSide(t *testing.T) {
	fs := Generate(4)
	for _, f := range fs {
		w := f.Walk(3, 5)
		if len(w) != 10 {
			t.Fatalf("fence %s: %d positions, want 10", f.ID, len(w))
		}
	}
	if fs[0].Sides != 0 || fs[1].Sides == 0 {
		t.Errorf("want a circle then a polygon, got %d and %d sides", fs[0].Sides, fs[1].Sides)
	}
}
