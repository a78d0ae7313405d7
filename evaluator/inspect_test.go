package evaluator

import (
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/inspect"
)

// A processor's view of a device in virtual time: a ping waiting out the
// hold is pending with its stamp, one released is committed with the
// fence it put the device in; looking does not create a device; a walk in
// steps sees every device once.
func TestProcessorInspectAndSummarise(t *testing.T) {
	h := newHarness(t, nil)
	h.send("van-7", inDepot, ms(0), ms(10))
	h.send("van-7", inDepot, ms(300), ms(310))
	h.at(ms(600)) // the first ping's hold is over, the second's not
	v, ok := h.proc.Inspect("van-7", t0.Add(ms(600)))
	if !ok {
		t.Fatal("no view of van-7")
	}
	if v.Evaluated != 1 || len(v.History) != 1 || !v.History[0].Event.Equal(t0) {
		t.Errorf("evaluated %d, history %+v: want the first ping committed", v.Evaluated, v.History)
	}
	if v.Buffered != 1 || len(v.Pending) != 1 || !v.Pending[0].Event.Equal(t0.Add(ms(300))) || v.Pending[0].Clamp.Clamped() {
		t.Errorf("pending %+v: want the second ping, unclamped", v.Pending)
	}
	if len(v.Fences) != 1 || v.Fences[0].Fence != "depot" || !v.Fences[0].Inside || !v.Fences[0].Since.Equal(t0) {
		t.Errorf("fences %+v, want depot since %v", v.Fences, t0)
	}
	if _, ok := h.proc.Inspect("nobody", t0); ok || h.proc.Devices() != 1 {
		t.Errorf("an unknown device has a view, or was created (%d devices)", h.proc.Devices())
	}

	for _, id := range []string{"a", "b", "c", "d", "e"} {
		h.send(id, outside, ms(700), ms(700))
	}
	seen := map[string]int{}
	next, steps := 0, 0
	for {
		next = h.proc.Summarise(next, 2, t0.Add(time.Second), func(s *inspect.DeviceSummary) { seen[s.Device]++ })
		steps++
		if next == 0 {
			break
		}
	}
	if len(seen) != 6 || steps != 3 {
		t.Errorf("walk of 6 devices in steps of 2: %v in %d steps", seen, steps)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s seen %d times", id, n)
		}
	}
}
