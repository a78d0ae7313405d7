package fleet

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/shadow"
)

// TestAttributeNoise is a diagnostic, not a check: with
// EDGEFENCE_NOISE=N it runs the first N devices of the fleet with GPS
// noise and no other fault at the 500 ms hold, and tallies the true
// stays by how deep they went, the phantoms by the true distance of
// their causing ping from the fence's edge (in units of its accuracy,
// positive inside) and the missed transitions by how deep the stay
// around them went. EDGEFENCE_NOISE_CORR=0 makes the error white.
// Skipped otherwise.
func TestAttributeNoise(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("EDGEFENCE_NOISE"))
	if n == 0 {
		t.Skip("diagnostic: scripts/fleet-diagnose noise N")
	}
	cfg := DefaultConfig()
	cfg.GPSNoise = true
	cfg.ClockOffset, cfg.DelayMedian, cfg.HandoverPerH, cfg.ColdBootPerH, cfg.OutagePerH = 0, 0, 0, 0, 0
	if s := os.Getenv("EDGEFENCE_NOISE_CORR"); s != "" {
		cfg.GPSNoiseCorr, _ = time.ParseDuration(s)
	}
	eng, set, runner := diagnosticRunner(t, &cfg, shadow.Strategies([]time.Duration{500 * time.Millisecond}))
	clamp := eng.Clamper()
	phantom := map[string]int{}
	missed := map[string]int{}
	var truthN, emittedN int
	stays := map[string]int{} // true stays by depth
	for i := range n {
		var f faults
		samples, _ := cfg.generate(i, Start, set.Fences(), nil, &f)
		truthEv := trueEvents(samples, set, eng.Dwell)
		out := runner.Device(arrivalsOf(clamp, i, samples))[0]
		var emitted []event
		var cause []int
		for k := range out {
			tr := &out[k]
			at, c := causeOf(samples, tr)
			emitted = append(emitted, event{fence: tr.Fence, typ: tr.Type, at: at})
			cause = append(cause, c)
		}
		truthN += len(truthEv)
		for _, e := range truthEv {
			if e.typ != engine.Enter {
				continue
			}
			f := set.ByID(e.fence)
			depth := 0.0
			for k := range samples {
				s := &samples[k]
				if s.at < e.at {
					continue
				}
				if !f.Contains(s.lat, s.lon) {
					break
				}
				depth = max(depth, f.EdgeDistance(s.lat, s.lon))
			}
			stays[fmt.Sprintf("depth<=%3.0fm", depthBucket(depth))]++
		}
		emittedN += len(emitted)
		um, ut := unmatched(truthEv, emitted, int64(cfg.MatchEarly), int64(cfg.MatchLate))
		for _, u := range um {
			key := emitted[u].typ.String()
			if c := cause[u]; c >= 0 {
				s := &samples[c]
				f := set.ByID(emitted[u].fence)
				d := f.EdgeDistance(s.lat, s.lon)
				if !f.Contains(s.lat, s.lon) {
					d = -d
				}
				key += fmt.Sprintf(" true d/acc %+3.0f", bucket(d/s.acc))
			}
			phantom[key]++
		}
		for _, u := range ut {
			e := truthEv[u]
			f := set.ByID(e.fence)
			// The stay's depth: the deepest true sample in the fence
			// within 10 minutes of the event, while continuously inside.
			depth := 0.0
			for k := range samples {
				if s := &samples[k]; s.at >= e.at-int64(10*time.Minute) && s.at <= e.at+int64(10*time.Minute) && f.Contains(s.lat, s.lon) {
					depth = max(depth, f.EdgeDistance(s.lat, s.lon))
				}
			}
			missed[fmt.Sprintf("%s depth<=%3.0fm", e.typ, depthBucket(depth))]++
		}
	}
	t.Logf("%d devices: %d true, %d emitted", n, truthN, emittedN)
	dump(t, "true stays", stays)
	dump(t, "phantom", phantom)
	dump(t, "missed", missed)
}

func bucket(x float64) float64 {
	if x > 6 {
		return 6
	}
	if x < -6 {
		return -6
	}
	if x < 0 {
		return -float64(int(-x)) - 1
	}
	return float64(int(x))
}

func depthBucket(d float64) float64 {
	for _, b := range []float64{1, 2, 5, 10, 20, 50, 100} {
		if d <= b {
			return b
		}
	}
	return 999
}

func dump(t *testing.T, name string, m map[string]int) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%s %-28s %6d", name, k, m[k])
	}
}

// unmatched returns the indices of the emitted and of the true
// transitions the alignment leaves unmatched.
func unmatched(truth, emitted []event, early, late int64) (em, tr []int) {
	fences := map[string]bool{}
	for _, e := range emitted {
		fences[e.fence] = true
	}
	for _, e := range truth {
		fences[e.fence] = true
	}
	for f := range fences {
		var ai, bi []int
		for k, e := range truth {
			if e.fence == f {
				ai = append(ai, k)
			}
		}
		for k, e := range emitted {
			if e.fence == f {
				bi = append(bi, k)
			}
		}
		w := len(bi) + 1
		dp := make([]int, (len(ai)+1)*w)
		ok := func(i, j int) bool {
			x, y := truth[ai[i-1]], emitted[bi[j-1]]
			return x.typ == y.typ && y.at >= x.at-early && y.at <= x.at+late
		}
		for i := 1; i <= len(ai); i++ {
			for j := 1; j <= len(bi); j++ {
				best := max(dp[(i-1)*w+j], dp[i*w+j-1])
				if ok(i, j) {
					best = max(best, dp[(i-1)*w+j-1]+1)
				}
				dp[i*w+j] = best
			}
		}
		mb, ma := map[int]bool{}, map[int]bool{}
		for i, j := len(ai), len(bi); i > 0 && j > 0; {
			switch {
			case ok(i, j) && dp[i*w+j] == dp[(i-1)*w+j-1]+1:
				mb[j-1], ma[i-1] = true, true
				i, j = i-1, j-1
			case dp[i*w+j] == dp[(i-1)*w+j]:
				i--
			default:
				j--
			}
		}
		for j := range bi {
			if !mb[j] {
				em = append(em, bi[j])
			}
		}
		for i := range ai {
			if !ma[i] {
				tr = append(tr, ai[i])
			}
		}
	}
	return em, tr
}
