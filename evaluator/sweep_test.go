package evaluator

import (
	"strconv"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"pgregory.net/rapid"
)

// A sweep in steps looks at every device once per round, whatever devices
// leave between its steps: every idle one outside is evicted, and the
// rest stay (those inside a fence got their DWELL from its timer, not
// from the sweep).
func TestSweepInStepsLooksAtEveryDeviceOnce(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarness(t, nil)
		n := rapid.IntRange(1, 120).Draw(rt, "devices")
		inside := make([]bool, n)
		for i := range n {
			inside[i] = rapid.Bool().Draw(rt, "inside")
			p := outside
			if inside[i] {
				p = inDepotZ
			}
			h.send("d"+strconv.Itoa(i), p, ms(i), ms(i))
		}
		h.at(time.Second) // every ping released
		before := len(h.rec.trans)

		// Idle past the timeout: the DWELL timers have fired; then one
		// round, in steps, forgetting devices (deprovisioned) between them.
		now := t0.Add(h.cfg.IdleTimeout + time.Minute)
		h.at(now.Sub(t0))
		forgot := map[int]bool{}
		for step := 0; ; step++ {
			if step > 4*n+4 {
				rt.Fatalf("the round did not end after %d steps", step)
			}
			for range rapid.IntRange(0, 2).Draw(rt, "forgets") {
				i := rapid.IntRange(0, n-1).Draw(rt, "forget")
				forgot[i] = true
				h.proc.Forget("d" + strconv.Itoa(i))
			}
			checkSlots(rt, h.proc)
			if h.proc.SweepStep(now, rapid.IntRange(1, 8).Draw(rt, "budget")) {
				break
			}
		}
		checkSlots(rt, h.proc)

		dwells := map[string]int{} // by device
		fired := map[string]bool{} // by device and fence
		for _, tr := range h.rec.trans[before:] {
			if tr.Type != engine.Dwell || !tr.Timer || fired[tr.Device+" "+tr.Fence] {
				rt.Fatalf("the sweep emitted %s (DWELLs before: %v)", line(&tr), fired)
			}
			fired[tr.Device+" "+tr.Fence] = true
			dwells[tr.Device]++
		}
		for i := range n {
			id := "d" + strconv.Itoa(i)
			_, held := h.proc.devices[id]
			switch {
			case forgot[i]:
				if held {
					rt.Fatalf("%s forgotten but held", id)
				}
			case inside[i]:
				if !held || dwells[id] == 0 {
					rt.Fatalf("%s inside a fence: held %v, %d timer DWELLs; want held, and its DWELLs", id, held, dwells[id])
				}
			default:
				if held {
					rt.Fatalf("%s idle outside every fence, not evicted by the round", id)
				}
			}
		}
		// A new round after it has nothing left to do.
		if !h.proc.SweepStep(now, n+1) || len(h.rec.trans) != before+len(fired) {
			rt.Fatalf("a second round did more")
		}
	})
}

// checkSlots checks that the sweep's list holds exactly the devices, each
// at its slot.
func checkSlots(t rapid.TB, p *Processor) {
	if len(p.all) != len(p.devices) {
		t.Fatalf("%d devices in the sweep's list, %d held", len(p.all), len(p.devices))
	}
	for i, d := range p.all {
		if int(d.slot) != i || p.devices[d.id] != d {
			t.Fatalf("device %q at %d says slot %d (held: %v)", d.id, i, d.slot, p.devices[d.id] == d)
		}
	}
	if p.cursor > len(p.all) {
		t.Fatalf("cursor %d past %d devices", p.cursor, len(p.all))
	}
}
