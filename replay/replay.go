// Package replay runs a capture (serve --capture) through the engine in
// virtual time, at the instants its pings arrived, under several holds,
// and diffs each hold's transitions against a baseline's: what a hold
// would have changed on a real session.
package replay

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/progress"
	"github.com/edgefence/edgefence/shadow"
)

// Options are a replay's settings.
type Options struct {
	Engine engine.Config   // serve's engine; its Hold is replaced per strategy
	Holds  []time.Duration // the strategies; diffed against hold 0, or the first if 0 is not listed
	Fences string          // GeoJSON fence file: the one the captured broker ran with
	Status *progress.Line  // counts the records read and devices replayed; nil: none
}

// DefaultOptions are replay's defaults: serve's engine under arrival
// order and the fixed holds 200 ms, 500 ms and 2 s, with the bundled
// fences.
func DefaultOptions() Options {
	return Options{
		Engine: engine.DefaultConfig(),
		Holds:  []time.Duration{0, 200 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second},
		Fences: "fences.geojson",
	}
}

// Result is what a replay found.
type Result struct {
	Files       []string      // the capture files read, rotated ones first
	Read        capture.Stats // records read and lines skipped
	Devices     int
	First, Last time.Time // earliest and latest arrival
	Fences      int
	Rows        []shadow.Row // one per hold, in the order given
	Baseline    int          // the row the others are diffed against
	// Transitions are, per hold, every device's committed transitions.
	Transitions [][]engine.Transition
}

// arrival is a captured ping with what orders it among its device's.
type arrival struct {
	seq  uint64
	ping engine.Ping
}

// Run reads the captures at paths and runs each device's pings, in the
// order they arrived, through the engine under every hold of o.
func Run(o Options, paths []string) (*Result, error) {
	if len(o.Holds) == 0 {
		return nil, errors.New("replay: --holds is empty")
	}
	for i, h := range o.Holds {
		if slices.Contains(o.Holds[:i], h) {
			return nil, fmt.Errorf("replay: hold %v is listed twice", h)
		}
		c := o.Engine
		c.Hold = h
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
	}
	set, err := fence.Load(o.Fences)
	if err != nil {
		return nil, err
	}
	status := o.Status
	if status == nil {
		status = progress.New(nil, progress.Options{})
	}
	status.Restart("replay: reading", "records", 0, 0)
	res := &Result{Fences: set.Len()}
	byDevice := make(map[string][]arrival)
	minIngest, maxIngest := int64(math.MaxInt64), int64(math.MinInt64)
	res.Files, res.Read, err = capture.ReadFiles(func(r *capture.Record) error {
		status.Add(1)
		minIngest, maxIngest = min(minIngest, r.Ingest), max(maxIngest, r.Ingest)
		byDevice[r.Device] = append(byDevice[r.Device], arrival{seq: r.Seq, ping: r.Ping()})
		return nil
	}, paths...)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	if len(byDevice) == 0 {
		return nil, fmt.Errorf("replay: no records in %s", strings.Join(res.Files, ", "))
	}
	res.Devices = len(byDevice)
	res.First, res.Last = time.Unix(0, minIngest).UTC(), time.Unix(0, maxIngest).UTC()

	// Instants with a monotonic reading keep the engine's many time
	// subtractions on time.Time's fast path; their wall clock is exact.
	now := time.Now()
	base := now.Add(time.Unix(0, minIngest).Sub(now))
	strategies := shadow.Strategies(o.Holds)
	runner, err := shadow.NewRunner(o.Engine, set, strategies, base)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	res.Transitions = make([][]engine.Transition, len(strategies))
	ids := make([]string, 0, len(byDevice))
	for id := range byDevice {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	status.Restart("replay", "devices", int64(len(ids)), 0)
	var pings []engine.Ping
	for _, id := range ids {
		status.Add(1)
		arr := byDevice[id]
		// Ingest stamps can tie (a coarse clock); seq breaks ties. Across
		// restarts seq starts again at 1, but so does no ingest stamp.
		slices.SortStableFunc(arr, func(a, b arrival) int {
			if c := a.ping.Ingest.Compare(b.ping.Ingest); c != 0 {
				return c
			}
			return cmp.Compare(a.seq, b.seq)
		})
		pings = pings[:0]
		for i := range arr {
			pg := arr[i].ping
			pg.Device = id // one string per device, not one per record
			pg.Ingest = base.Add(pg.Ingest.Sub(res.First))
			pings = append(pings, pg)
		}
		delete(byDevice, id) // its memory is not needed any more
		for i, trans := range runner.Device(pings) {
			res.Transitions[i] = append(res.Transitions[i], trans...)
		}
	}
	for _, s := range runner.Stats() {
		res.Rows = append(res.Rows, shadow.Row{Stats: s})
	}
	res.Baseline = max(slices.Index(o.Holds, 0), 0)
	return res, nil
}
