package fleet

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/shadow"
)

// TestHoldDiff is a diagnostic, not a check: with EDGEFENCE_HOLDDIFF=N
// it scores the default fleet's first N devices under the fixed 500 ms
// and the adaptive hold, as Run does, and lists the devices whose
// phantoms differ; EDGEFENCE_HOLDDIFF_TRACE=i (with N = i+1) runs device
// i alone and prints its truth and both strategies' transitions.
// Skipped otherwise.
func TestHoldDiff(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("EDGEFENCE_HOLDDIFF"))
	if n == 0 {
		t.Skip("diagnostic: scripts/fleet-diagnose holddiff N")
	}
	cfg := DefaultConfig()
	strategies := []shadow.Strategy{shadow.Strategies([]time.Duration{500 * time.Millisecond})[0], {Name: "adaptive", Adaptive: true}}
	eng, set, runner := diagnosticRunner(t, &cfg, strategies)
	clamp := eng.Clamper()
	var f faults
	var samples []sample
	var dp []int32
	var merged []event
	total := [2]int64{}
	trace := map[int]bool{}
	first := 0
	if s := os.Getenv("EDGEFENCE_HOLDDIFF_TRACE"); s != "" {
		for _, f := range strings.Split(s, ",") {
			i, _ := strconv.Atoi(f)
			trace[i] = true
		}
		first = n - 1
	}
	for i := first; i < n; i++ {
		samples, _ = cfg.generate(i, Start, set.Fences(), samples, &f)
		truthEv := trueEvents(samples, set, eng.Dwell)
		byArrival(samples)
		var ph [2]int64
		outs := runner.Device(arrivalsOf(clamp, i, samples))
		for si, out := range outs {
			var live, past []event
			for k := range out {
				tr := &out[k]
				at, _ := causeOf(samples, tr)
				if tr.Historic {
					past = append(past, event{fence: tr.Fence, typ: tr.Type, at: at})
				} else {
					live = append(live, event{fence: tr.Fence, typ: tr.Type, at: at})
				}
			}
			theirs := placeHistoric(live, past, &merged)
			mine := append([]event(nil), truthEv...)
			var sc score
			sc, dp = align(mine, theirs, int64(cfg.MatchEarly), int64(cfg.MatchLate), dp)
			ph[si] = sc.emitted - sc.matched
			total[si] += ph[si]
		}
		if ph[0] != ph[1] {
			t.Logf("device %d: 500ms %d phantoms, adaptive %d", i, ph[0], ph[1])
		}
		if trace[i] {
			for _, e := range truthEv {
				t.Logf("truth    %s %s %v", e.fence, e.typ, time.Duration(e.at))
			}
			for si, out := range outs {
				for k := range out {
					tr := &out[k]
					t.Logf("%-8s %s %s event %v ingest %v decided %v historic %v", strategies[si].Name, tr.Fence, tr.Type,
						time.Unix(0, tr.Event).Sub(Start), tr.Ingest.Sub(Start), tr.Decided.Sub(Start), tr.Historic)
				}
			}
		}
	}
	t.Logf("%d devices: 500ms %d phantoms, adaptive %d", n, total[0], total[1])
}
