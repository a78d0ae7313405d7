package fleet

import (
	"math"
	"testing"
	"time"
)

// The default fleet's fixes are what docs/simulation.md says: acc the 68 %
// radius of the error for honest devices, half of it for optimistic ones,
// one fix in a thousand an outlier 100–500 m off, parked devices standing
// still within 30 m of an edge. A device that does not park has the same
// clock and network faults with noise off: only its fixes differ.
func TestDefaultFleetIsTheModel(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Duration = 5 * time.Minute
	set, err := cfg.Fences(300)
	if err != nil {
		t.Fatal(err)
	}
	clean := cfg
	clean.GPSNoise = false
	cosLat := math.Cos(cfg.CenterLat * math.Pi / 180)
	var within, fixes, optWithin, optFixes, outliers, poor, opt, parked int
	var f faults
	const n = 400
	for i := range n {
		s, dev := cfg.generate(i, Start, set.Fences(), nil, &f)
		rx := cfg.newReceiver(i)
		honest := rx.honest
		if rx.sigma*r68 >= cfg.PoorAccMin {
			poor++
		}
		if !honest {
			opt++
		}
		for k := range s {
			e := math.Hypot((s[k].rlat-s[k].lat)*mPerDegLat, (s[k].rlon-s[k].lon)*mPerDegLat*cosLat)
			if s[k].outlier {
				outliers++
				continue
			}
			if honest {
				fixes++
				if e <= s[k].acc {
					within++
				}
			} else {
				optFixes++
				if e <= s[k].acc*cfg.OptimisticFactor {
					optWithin++
				}
			}
		}
		if pk := dev.park; pk != nil && pk.from >= 0 {
			parked++
			var at *sample
			for k := range s {
				if !dev.parked(s[k].at) {
					continue
				}
				if at == nil {
					at = &s[k]
					best := math.Inf(1)
					for _, fc := range set.Fences() {
						best = min(best, fc.EdgeDistance(at.lat, at.lon))
					}
					if best > cfg.ParkNear+1 {
						t.Errorf("device %d parked %.1f m from the nearest edge", i, best)
					}
				} else if s[k].lat != at.lat || s[k].lon != at.lon {
					t.Fatalf("device %d moved while parked", i)
				}
			}
			continue
		}
		c, _ := clean.generate(i, Start, set.Fences(), nil, &faults{})
		if len(c) != len(s) {
			t.Fatalf("device %d: %d pings clean, %d noisy", i, len(c), len(s))
		}
		for k := range c {
			if c[k].at != s[k].at || c[k].stamp != s[k].stamp || c[k].arrival != s[k].arrival || c[k].lat != s[k].lat || c[k].acc != 0 || c[k].rlat != c[k].lat {
				t.Fatalf("device %d ping %d: clean %+v, noisy %+v", i, k, c[k], s[k])
			}
		}
	}
	share := func(a, b int) float64 { return float64(a) / float64(b) }
	if r := share(within, fixes); math.Abs(r-0.68) > 0.05 {
		t.Errorf("honest devices: %.3f of fixes within acc, want 0.68", r)
	}
	if r := share(optWithin, optFixes); math.Abs(r-0.68) > 0.1 {
		t.Errorf("optimistic devices: %.3f of fixes within %g × acc, want 0.68", r, cfg.OptimisticFactor)
	}
	if r := share(outliers, fixes+optFixes+outliers); r < 0.0005 || r > 0.002 {
		t.Errorf("outliers: %.4f of fixes, want about 0.001", r)
	}
	if int64(outliers) != f.Outliers || parked == 0 || int64(parked) != f.Parked {
		t.Errorf("counted %d outliers, %d parked; faults say %d, %d", outliers, parked, f.Outliers, f.Parked)
	}
	t.Logf("%d devices: %d poor, %d optimistic, %d parked; %.3f honest within acc; %d outliers", n, poor, opt, parked, share(within, fixes), outliers)
}

// On the default fleet the ambiguous truth is at most 10 % of the true
// transitions: the rule cannot excuse what the engine should get right.
func TestAmbiguousShareOfTheDefaultFleet(t *testing.T) {
	res := shortRun(t, 2, nil)
	if res.Truth == 0 || res.Ambiguous*10 > res.Truth {
		t.Fatalf("%d of %d true transitions ambiguous: over 10 %%", res.Ambiguous, res.Truth)
	}
	if res.Faults.Parked == 0 || res.Faults.Outliers == 0 {
		t.Fatalf("the default fleet has no parked devices (%d) or outliers (%d)", res.Faults.Parked, res.Faults.Outliers)
	}
	t.Logf("%d of %d ambiguous (%.2f%%)", res.Ambiguous, res.Truth, 100*float64(res.Ambiguous)/float64(res.Truth))
}
