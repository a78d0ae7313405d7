package evaluator

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/payload"
	"pgregory.net/rapid"
)

// parkedStream generates devices that stay at one spot for runs of pings
// (parked, so a silent one's DWELL comes from its timer), go silent for
// longer than a dwell now and then, and move on, with clocks that run off
// and step and pings delayed past the hold and the history wait.
func parkedStream(t *rapid.T) []stampedPing {
	var out []stampedPing
	for d := range rapid.IntRange(1, 4).Draw(t, "devices") {
		ev := time.Duration(0)
		off := ms(rapid.IntRange(-5000, 5000).Draw(t, "offset_ms"))
		at := points[rapid.IntRange(0, len(points)-1).Draw(t, "start")]
		for range rapid.IntRange(1, 60).Draw(t, "pings") {
			ev += ms(rapid.IntRange(1, 3000).Draw(t, "gap_ms"))
			if rapid.IntRange(0, 6).Draw(t, "silence") == 0 {
				ev += ms(rapid.IntRange(1000, 12000).Draw(t, "silence_ms"))
			}
			if rapid.IntRange(0, 3).Draw(t, "move") == 0 {
				at = points[rapid.IntRange(0, len(points)-1).Draw(t, "point")]
			}
			if rapid.IntRange(0, 30).Draw(t, "step") == 0 {
				off += ms(rapid.IntRange(-20000, 20000).Draw(t, "step_ms"))
			}
			delay := ms(rapid.IntRange(0, 400).Draw(t, "delay_ms"))
			if rapid.IntRange(0, 8).Draw(t, "delayed") == 0 {
				delay = ms(rapid.IntRange(400, 30000).Draw(t, "long_delay_ms"))
			}
			out = append(out, stampedPing{
				dev: fmt.Sprintf("dev-%d", d), p: at,
				stamp: t0.Add(ev + off).UnixNano(), hasStamp: rapid.IntRange(0, 20).Draw(t, "nostamp") != 0,
				arrive: ev + delay,
			})
		}
	}
	slices.SortStableFunc(out, func(a, b stampedPing) int { return cmp.Compare(a.arrive, b.arrive) })
	return out
}

// TestPropertyOutputsDoNotDependOnTheSweep is issue 23's single-box bar
// inside one engine: the same arrivals, advanced with AdvanceThrough, give
// the same transitions (every one decided at the same instant) and late
// pings whether the owner sweeps every 125 ms, every second or only now
// and then. A scale-out partition sweeps on its owner's ticks, a single
// box on its own; a DWELL that came due while a device was silent used to
// be decided at the next sweep.
func TestPropertyOutputsDoNotDependOnTheSweep(t *testing.T) {
	set := mustFences(t, testFences)
	fences := func() *fence.Set { return set }
	rapid.Check(t, func(t *rapid.T) {
		cfg := engine.DefaultConfig()
		cfg.Shards = 1
		switch rapid.IntRange(0, 3).Draw(t, "hold") {
		case 1:
			cfg.Hold = engine.AdaptiveHold
		case 2:
			cfg.Hold = 0 // arrival order
		}
		if rapid.Bool().Draw(t, "no_history") {
			cfg.History = 0
		}
		cfg.Dwell = []time.Duration{0, 2 * time.Second, 5 * time.Second, 5 * time.Minute}[rapid.IntRange(0, 3).Draw(t, "dwell")]
		var s []stampedPing
		if rapid.Bool().Draw(t, "parked") {
			s = parkedStream(t)
		} else {
			s = clockStream(t)
		}
		end := s[len(s)-1].arrive + cfg.IdleTimeout + 5*time.Minute
		run := func(sweeps []time.Duration) (string, string) {
			var rec recorder
			p, err := NewProcessor(cfg, t0, fences, &rec, nil)
			if err != nil {
				t.Fatal(err)
			}
			k := 0
			sweepTo := func(now time.Duration) {
				for ; k < len(sweeps) && sweeps[k] <= now; k++ {
					p.AdvanceThrough(t0.Add(sweeps[k]))
					p.Sweep(t0.Add(sweeps[k]))
				}
			}
			for _, x := range s {
				sweepTo(x.arrive)
				ingest := t0.Add(x.arrive)
				pp := payload.Position{Lat: x.p.lat, Lon: x.p.lon, TsNs: x.stamp, HasTs: x.hasStamp}
				pg := engine.NewPing(cfg.Clamper(), x.dev, &pp, ingest)
				p.AdvanceThrough(ingest)
				p.Ingest(&pg)
				p.Advance(ingest)
			}
			sweepTo(end)
			p.AdvanceThrough(t0.Add(end))
			// One device's outputs in the order it got them; devices
			// decided at one instant may come out in either order.
			slices.SortStableFunc(rec.trans, func(a, b engine.Transition) int { return cmp.Compare(a.Device, b.Device) })
			slices.SortStableFunc(rec.late, func(a, b engine.Late) int { return cmp.Compare(a.Ping.Device, b.Ping.Device) })
			var tr, late strings.Builder
			for _, x := range rec.trans {
				fmt.Fprintf(&tr, "%s %s %v %v decided %v historic %v timer %v\n", x.Device, x.Fence, x.Type,
					time.Unix(0, x.Event).Sub(t0), x.Decided.Sub(t0), x.Historic, x.Timer)
			}
			for _, l := range rec.late {
				fmt.Fprintf(&late, "%s %v %v\n", l.Ping.Device, time.Unix(0, l.Ping.Event).Sub(t0), l.Reason)
			}
			return tr.String(), late.String()
		}
		every := func(d time.Duration) []time.Duration {
			var out []time.Duration
			for at := d; at <= end; at += d {
				out = append(out, at)
			}
			return out
		}
		var seldom []time.Duration
		for range rapid.IntRange(0, 5).Draw(t, "sweeps") {
			seldom = append(seldom, ms(rapid.IntRange(0, int(end/time.Millisecond)).Draw(t, "sweep_ms")))
		}
		slices.Sort(seldom)
		wt, wl := run(every(time.Second))
		for _, c := range []struct {
			name   string
			sweeps []time.Duration
		}{{"every 125 ms", every(125 * time.Millisecond)}, {"now and then", seldom}} {
			gt, gl := run(c.sweeps)
			if gt != wt {
				t.Fatalf("transitions, swept %s:\n%s\nswept every second:\n%s", c.name, gt, wt)
			}
			if gl != wl {
				t.Fatalf("late pings, swept %s:\n%s\nswept every second:\n%s", c.name, gl, wl)
			}
		}
	})
}
