package evaluator

import (
	"fmt"
	"strings"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/evaluator/stats"
)

// Three test fences near Berlin: depot and yard side by side, zone
// overlapping both.
const testFences = `{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"depot","properties":{"name":"Depot"},"geometry":{"type":"Polygon","coordinates":[[[13.400,52.500],[13.410,52.500],[13.410,52.510],[13.400,52.510],[13.400,52.500]]]}},
 {"type":"Feature","id":"yard","properties":{"dwell":0},"geometry":{"type":"Polygon","coordinates":[[[13.410,52.500],[13.420,52.500],[13.420,52.510],[13.410,52.510],[13.410,52.500]]]}},
 {"type":"Feature","id":"zone","properties":{"dwell":3},"geometry":{"type":"Polygon","coordinates":[[[13.405,52.500],[13.415,52.500],[13.415,52.510],[13.405,52.510],[13.405,52.500]]]}}
]}`

// marginTwo sets the accuracy margin to 2, the number the margin's
// own tests were written with.
func marginTwo(c *engine.Config) { c.AccuracyMargin = 2 }

// oneFixDecides makes every test fence change a device's state on one fix
// clear of its margin, with no second to agree (properties.confirm
// false): for the tests of the margin alone among late fixes.
func (h *harness) oneFixDecides() {
	h.t.Helper()
	h.set = mustFences(h.t, strings.ReplaceAll(testFences, `"properties":{`, `"properties":{"confirm":false,`))
}

// Positions relative to the test fences.
var (
	inDepot    = pos{52.505, 13.402} // depot only
	inDepotZ   = pos{52.505, 13.407} // depot and zone
	inYardZ    = pos{52.505, 13.412} // yard and zone
	inYard     = pos{52.505, 13.418} // yard only
	outside    = pos{52.520, 13.402}
	anotherOut = pos{52.530, 13.450}
)

type pos struct{ lat, lon float64 }

// t0 is the test's "now" on the device's and the server's wall clock;
// virtual instants are offsets from it.
var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// tb is what the harness needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func mustFences(t tb, geojson string) *fence.Set {
	t.Helper()
	s, err := fence.Parse([]byte(geojson))
	if err != nil {
		t.Fatalf("parse test fences: %v", err)
	}
	return s
}

// recorder is a Sink that keeps everything, as the tests read it.
type recorder struct {
	trans []engine.Transition
	late  []engine.Late
}

func (r *recorder) Transition(t *engine.Transition) { r.trans = append(r.trans, *t) }
func (r *recorder) Late(l *engine.Late)             { r.late = append(r.late, *l) }

// lines renders transitions as "device fence TYPE +offset" for readable diffs.
func (r *recorder) lines() []string {
	out := make([]string, 0, len(r.trans))
	for _, t := range r.trans {
		out = append(out, line(&t))
	}
	return out
}

func line(t *engine.Transition) string {
	d := time.Unix(0, t.Event).Sub(t0)
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	return fmt.Sprintf("%s %s %s %s%v", t.Device, t.Fence, t.Type, sign, d)
}

// noHistory turns reconciliation off: late pings go to the late output.
func noHistory(c *engine.Config) { c.History = 0 }

// harness drives one Processor in virtual time.
type harness struct {
	t    tb
	cfg  engine.Config
	set  *fence.Set
	rec  *recorder
	m    *stats.Metrics
	proc *Processor
}

func newHarness(t tb, mod func(*engine.Config)) *harness {
	t.Helper()
	cfg := engine.DefaultConfig()
	cfg.Shards = 1
	// The test fixtures jump a kilometre between pings a second apart:
	// the speed gate's tests switch it on (gate_test.go).
	cfg.MaxSpeed = 0
	if mod != nil {
		mod(&cfg)
	}
	h := &harness{t: t, cfg: cfg, set: mustFences(t, testFences), rec: &recorder{}, m: stats.NewMetrics(nil)}
	var err error
	h.proc, err = NewProcessor(cfg, t0, func() *fence.Set { return h.set }, h.rec, h.m)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// send delivers a ping stamped at event (offset from t0) arriving at
// arrive (offset from t0), then advances the clock to its arrival.
func (h *harness) send(dev string, p pos, event, arrive time.Duration) {
	h.sendStamp(dev, p, t0.Add(event).UnixNano(), true, arrive)
}

func (h *harness) sendStamp(dev string, p pos, stamp int64, hasStamp bool, arrive time.Duration) {
	ingest := t0.Add(arrive)
	pp := payload.Position{Lat: p.lat, Lon: p.lon, TsNs: stamp, HasTs: hasStamp}
	pg := engine.NewPing(h.cfg.Clamper(), dev, &pp, ingest)
	h.proc.Advance(ingest)
	h.proc.Ingest(&pg)
	h.proc.Advance(ingest)
}

// at advances virtual time to offset d.
func (h *harness) at(d time.Duration) { h.proc.Advance(t0.Add(d)) }

func (h *harness) want(want ...string) {
	h.t.Helper()
	got := h.rec.lines()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Fatalf("transitions:\n got  %q\n want %q", got, want)
	}
}
