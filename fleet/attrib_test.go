package fleet

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/shadow"
)

// TestAttributePhantoms is a diagnostic, not a check: with
// EDGEFENCE_ATTRIB=N it runs the default fleet's first N devices at the
// 500 ms hold and attributes each phantom to the faults around its
// causing ping; EDGEFENCE_TRACE=i prints device i's arrivals and
// transitions. Skipped otherwise.
func TestAttributePhantoms(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("EDGEFENCE_ATTRIB"))
	trace := -1
	if s := os.Getenv("EDGEFENCE_TRACE"); s != "" {
		trace, _ = strconv.Atoi(s)
	}
	if n == 0 && trace < 0 && os.Getenv("EDGEFENCE_DEVICES") == "" {
		t.Skip("diagnostic: scripts/fleet-diagnose phantoms N")
	}
	cfg := DefaultConfig()
	eng, set, runner := diagnosticRunner(t, &cfg, shadow.Strategies([]time.Duration{500 * time.Millisecond}))
	clamp := eng.Clamper()
	first, last := 0, n
	if trace >= 0 {
		first, last = trace, trace+1
	}
	classes := map[string]int{}
	devs := map[string][]int{}
	total := 0
	var list []int
	for i := first; i < last; i++ {
		list = append(list, i)
	}
	if s := os.Getenv("EDGEFENCE_DEVICES"); s != "" {
		list = nil
		for _, f := range strings.Split(s, ",") {
			i, _ := strconv.Atoi(f)
			list = append(list, i)
		}
	}
	for _, i := range list {
		var f faults
		samples, _ := cfg.generate(i, Start, set.Fences(), nil, &f)
		truthEv := trueEvents(samples, set, eng.Dwell)
		byArrival(samples)
		out := runner.Device(arrivalsOf(clamp, i, samples))[0]
		var emitted []event
		var cause []int // sample index of each emitted transition's causing ping, -1 for a timer
		var hist []bool
		for k := range out {
			tr := &out[k]
			at, c := causeOf(samples, tr)
			emitted = append(emitted, event{fence: tr.Fence, typ: tr.Type, at: at})
			cause = append(cause, c)
			hist = append(hist, tr.Historic)
		}
		// Order as Run scores them: historic ones among the live.
		order := placeOrder(emitted, hist)
		em := make([]event, len(order))
		for k, o := range order {
			em[k] = emitted[o]
		}
		unmatched := phantomsOf(truthEv, em, int64(cfg.MatchEarly), int64(cfg.MatchLate))
		fl := faultsOf(samples, cfg)
		for _, u := range unmatched {
			o := order[u]
			c := fl.classify(emitted[o].at, cause[o], samples, hist[o])
			classes[c]++
			devs[c] = append(devs[c], i)
			total++
		}
		if trace >= 0 {
			printTrace(t, samples, truthEv, out, emitted, cause, unmatched, order, fl)
		}
	}
	t.Logf("%d devices: %d phantoms", len(list), total)
	keys := make([]string, 0, len(classes))
	for k := range classes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return classes[keys[a]] > classes[keys[b]] })
	for _, k := range keys {
		d := devs[k]
		cnt := map[int]int{}
		for _, x := range d {
			cnt[x]++
		}
		var ds []string
		for x, c := range cnt {
			ds = append(ds, fmt.Sprintf("%d:%d", x, c))
		}
		sort.Strings(ds)
		if len(ds) > 30 {
			ds = ds[:30]
		}
		t.Logf("%-28s %5d  devices %s", k, classes[k], strings.Join(ds, " "))
	}
}

// placeOrder returns the indices of emitted in the order Run scores
// them (see placeHistoric).
func placeOrder(emitted []event, hist []bool) []int {
	var live, past []int
	for k := range emitted {
		if hist[k] {
			past = append(past, k)
		} else {
			live = append(live, k)
		}
	}
	sort.SliceStable(past, func(a, b int) bool { return emitted[past[a]].at < emitted[past[b]].at })
	var out []int
	i := 0
	for _, e := range live {
		for i < len(past) && emitted[past[i]].at < emitted[e].at {
			out = append(out, past[i])
			i++
		}
		out = append(out, e)
	}
	return append(out, past[i:]...)
}

// phantomsOf returns the indices of emitted transitions the alignment
// leaves unmatched (align's LCS per fence, backtracked).
func phantomsOf(truth, emitted []event, early, late int64) []int {
	var out []int
	fences := map[string]bool{}
	for _, e := range emitted {
		fences[e.fence] = true
	}
	for f := range fences {
		var a []event
		for _, e := range truth {
			if e.fence == f {
				a = append(a, e)
			}
		}
		var bi []int
		for k, e := range emitted {
			if e.fence == f {
				bi = append(bi, k)
			}
		}
		w := len(bi) + 1
		dp := make([]int, (len(a)+1)*w)
		ok := func(i, j int) bool {
			x, y := a[i-1], emitted[bi[j-1]]
			return x.typ == y.typ && y.at >= x.at-early && y.at <= x.at+late
		}
		for i := 1; i <= len(a); i++ {
			for j := 1; j <= len(bi); j++ {
				best := max(dp[(i-1)*w+j], dp[i*w+j-1])
				if ok(i, j) {
					best = max(best, dp[(i-1)*w+j-1]+1)
				}
				dp[i*w+j] = best
			}
		}
		matched := map[int]bool{}
		for i, j := len(a), len(bi); i > 0 && j > 0; {
			switch {
			case ok(i, j) && dp[i*w+j] == dp[(i-1)*w+j-1]+1:
				matched[j-1] = true
				i, j = i-1, j-1
			case dp[i*w+j] == dp[(i-1)*w+j]:
				i--
			default:
				j--
			}
		}
		for j := range bi {
			if !matched[j] {
				out = append(out, bi[j])
			}
		}
	}
	sort.Ints(out)
	return out
}

type span struct{ from, to int64 }

// faultList is what a device's samples show of its faults, on true time.
type faultList struct {
	boots   []span
	outages []span
	steps   []int64 // true time of the first sample after a step
}

func faultsOf(samples []sample, cfg Config) faultList {
	var fl faultList
	floor := engine.DefaultMinValidTime.UnixNano()
	byAt := append([]sample(nil), samples...)
	sort.Slice(byAt, func(a, b int) bool { return byAt[a].at < byAt[b].at })
	var prevOff int64
	havePrev := false
	for _, s := range byAt {
		if s.stamp < floor {
			if n := len(fl.boots); n > 0 && s.at-fl.boots[n-1].to < 2*int64(time.Second) {
				fl.boots[n-1].to = s.at
			} else {
				fl.boots = append(fl.boots, span{s.at, s.at})
			}
			continue
		}
		if s.arrival-s.at > 5*int64(time.Second) {
			if n := len(fl.outages); n > 0 && s.at-fl.outages[n-1].to < 2*int64(time.Second) {
				fl.outages[n-1].to = s.at
			} else {
				fl.outages = append(fl.outages, span{s.at, s.at})
			}
		}
		off := s.stamp - Start.UnixNano() - s.at
		if havePrev && (off-prevOff > 5*int64(time.Millisecond) || prevOff-off > 5*int64(time.Millisecond)) {
			fl.steps = append(fl.steps, s.at)
		}
		prevOff, havePrev = off, true
	}
	// Boot pings in an outage are backlog too.
	for _, s := range byAt {
		if s.stamp < floor && s.arrival-s.at > 5*int64(time.Second) {
			fl.outages = append(fl.outages, span{s.at, s.at})
		}
	}
	return fl
}

func (fl *faultList) classify(at int64, cause int, samples []sample, historic bool) string {
	const near = int64(30 * time.Second)
	in := func(ss []span, x, pad int64) bool {
		for _, s := range ss {
			if x >= s.from-pad && x <= s.to+pad {
				return true
			}
		}
		return false
	}
	bootOutage := false
	for _, b := range fl.boots {
		if in(fl.outages, b.from, 0) || in(fl.outages, b.to, 0) {
			bootOutage = true
		}
	}
	stepOutage := false
	for _, s := range fl.steps {
		if in(fl.outages, s, 2*int64(time.Second)) {
			stepOutage = true
		}
	}
	h := "live"
	if historic {
		h = "hist"
	}
	switch {
	case bootOutage && in(fl.outages, at, near):
		return "boot-in-outage/" + h
	case stepOutage && in(fl.outages, at, near):
		return "step-in-outage/" + h
	case in(fl.boots, at, near):
		return "boot/" + h
	case in(fl.outages, at, near):
		return "outage/" + h
	}
	for _, s := range fl.steps {
		if at >= s-near && at <= s+near {
			return "step/" + h
		}
	}
	return "other/" + h
}

func printTrace(t *testing.T, samples []sample, truthEv []event, out []engine.Transition, emitted []event, cause []int, unmatched, order []int, fl faultList) {
	ph := map[int]bool{}
	var around []int64
	for _, u := range unmatched {
		ph[order[u]] = true
		around = append(around, emitted[order[u]].at)
	}
	const win = int64(40 * time.Second)
	near := func(at int64) bool {
		for _, a := range around {
			if at >= a-win && at <= a+win {
				return true
			}
		}
		return false
	}
	s := func(ns int64) string { return fmt.Sprintf("%.3f", float64(ns)/1e9) }
	ss := func(sp []span) string {
		var b []string
		for _, x := range sp {
			b = append(b, s(x.from)+"-"+s(x.to))
		}
		return strings.Join(b, " ")
	}
	var st []string
	for _, x := range fl.steps {
		st = append(st, s(x))
	}
	t.Logf("boots %s | outages %s | steps %s", ss(fl.boots), ss(fl.outages), strings.Join(st, " "))
	t.Log("truth:")
	for _, e := range truthEv {
		if near(e.at) {
			t.Logf("  %s %s %s", s(e.at), e.fence, e.typ)
		}
	}
	t.Log("emitted (true time of cause):")
	for k, e := range emitted {
		if !near(e.at) {
			continue
		}
		mark := ""
		if ph[k] {
			mark = "  <-- PHANTOM"
		}
		tr := &out[k]
		t.Logf("  %s %s %s hist=%v cause=%d clamp=%v event=%s decided=%s%s", s(e.at), e.fence, e.typ, tr.Historic, cause[k], tr.Clamp, s(tr.Event-Start.UnixNano()), s(int64(tr.Decided.Sub(Start))), mark)
	}
	if os.Getenv("EDGEFENCE_TRACE_PINGS") == "" {
		return
	}
	t.Log("arrivals: idx at arrival delay stampOff(ms)")
	for k, x := range samples {
		if os.Getenv("EDGEFENCE_TRACE_PINGS") == "all" || near(x.at) || near(x.arrival) {
			t.Logf("  %4d at=%s arr=%s delay=%s off=%d", k, s(x.at), s(x.arrival), s(x.arrival-x.at), (x.stamp-Start.UnixNano()-x.at)/1e6)
		}
	}
}

type lateSink struct{ late []engine.Late }

func (s *lateSink) Transition(*engine.Transition) {}
func (s *lateSink) Late(l *engine.Late)           { s.late = append(s.late, *l) }

// TestAttributeLost is a diagnostic like TestAttributePhantoms: with
// EDGEFENCE_LOST=N it lists the pings of the first N devices that the
// 500 ms hold sends to the late topic, by kind.
func TestAttributeLost(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("EDGEFENCE_LOST"))
	if n == 0 {
		t.Skip("diagnostic: scripts/fleet-diagnose lost N")
	}
	cfg := DefaultConfig()
	eng := engine.DefaultConfig()
	eng.Hold = 500 * time.Millisecond
	set, err := cfg.Fences(300)
	if err != nil {
		t.Fatal(err)
	}
	clamp := eng.Clamper()
	kinds := map[string]int{}
	for i := range n {
		var f faults
		samples, _ := cfg.generate(i, Start, set.Fences(), nil, &f)
		byArrival(samples)
		sink := &lateSink{}
		p, err := evaluator.NewProcessor(eng, Start, func() *fence.Set { return set }, sink, nil)
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("dev-%06d", i)
		prev := Start
		for k := range samples {
			s := &samples[k]
			pos := payload.Position{Lat: s.rlat, Lon: s.rlon, TsNs: s.stamp, HasTs: true}
			pg := engine.NewPing(clamp, id, &pos, Start.Add(time.Duration(s.arrival)))
			for next := prev.Add(time.Second); next.Before(pg.Ingest); next = next.Add(time.Second) {
				advance(p, next)
				p.Sweep(next)
			}
			prev = pg.Ingest
			advance(p, pg.Ingest)
			p.Ingest(&pg)
		}
		end := prev.Add(time.Hour)
		advance(p, end)
		p.Flush(end)
		floor := engine.DefaultMinValidTime.UnixNano()
		for _, l := range sink.late {
			// The sample it came from, by arrival.
			ing := int64(l.Ping.Ingest.Sub(Start))
			j := sort.Search(len(samples), func(j int) bool { return samples[j].arrival >= ing })
			s := samples[j]
			k := "live"
			switch {
			case s.stamp < floor && s.arrival-s.at > 5*int64(time.Second):
				k = "boot-backlog"
			case s.stamp < floor:
				k = "boot"
			case s.arrival-s.at > 5*int64(time.Second):
				k = "backlog"
			}
			kinds[k+"/"+l.Reason.String()]++
			if os.Getenv("EDGEFENCE_LOST_V") != "" {
				t.Logf("dev %d sample %d at=%.3f arr=%.3f delay=%.3f %s %s", i, j, float64(s.at)/1e9, float64(s.arrival)/1e9, float64(s.arrival-s.at)/1e9, k, l.Reason)
			}
		}
	}
	t.Logf("lost by kind: %v", kinds)
}

func advance(p *evaluator.Processor, now time.Time) {
	for {
		next, ok := p.NextDeadline()
		if !ok || next.After(now) {
			break
		}
		p.Advance(next)
	}
	p.Advance(now)
}
