package evaluator

import (
	"bytes"
	"cmp"
	"encoding/gob"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/history"
	"github.com/edgefence/edgefence/evaluator/payload"
	"github.com/edgefence/edgefence/evaluator/snapshot"
	"pgregory.net/rapid"
)

// stampedPing is one ping of a generated stream with a device clock that
// may run off, step and lose its stamp.
type stampedPing struct {
	dev      string
	p        pos
	stamp    int64
	hasStamp bool
	arrive   time.Duration
}

// clockStream generates devices whose clocks are offset, step now and
// then and sometimes send no stamp, with delays past the hold and past
// the history wait: every part of a device's state gets exercised.
func clockStream(t *rapid.T) []stampedPing {
	var out []stampedPing
	for d := range rapid.IntRange(1, 4).Draw(t, "devices") {
		ev := time.Duration(0)
		off := ms(rapid.IntRange(-5000, 5000).Draw(t, "offset_ms"))
		for range rapid.IntRange(1, 60).Draw(t, "pings") {
			ev += ms(rapid.IntRange(1, 3000).Draw(t, "gap_ms"))
			if rapid.IntRange(0, 30).Draw(t, "step") == 0 {
				off += ms(rapid.IntRange(-20000, 20000).Draw(t, "step_ms"))
			}
			delay := ms(rapid.IntRange(0, 400).Draw(t, "delay_ms"))
			if rapid.IntRange(0, 8).Draw(t, "delayed") == 0 {
				delay = ms(rapid.IntRange(400, 30000).Draw(t, "long_delay_ms"))
			}
			out = append(out, stampedPing{
				dev: fmt.Sprintf("dev-%d", d), p: points[rapid.IntRange(0, len(points)-1).Draw(t, "point")],
				stamp: t0.Add(ev + off).UnixNano(), hasStamp: rapid.IntRange(0, 20).Draw(t, "nostamp") != 0,
				arrive: ev + delay,
			})
		}
	}
	slices.SortStableFunc(out, func(a, b stampedPing) int { return cmp.Compare(a.arrive, b.arrive) })
	return out
}

// run drives proc through s[from:to] as a worker does: an Advance to each
// arrival, the ping, and a sweep every 250 ms of virtual time.
func runStream(cfg engine.Config, proc *Processor, s []stampedPing, from, to int, sweptTo *time.Duration) {
	for _, x := range s[from:to] {
		for *sweptTo+250*time.Millisecond <= x.arrive {
			*sweptTo += 250 * time.Millisecond
			proc.Advance(t0.Add(*sweptTo))
			proc.Sweep(t0.Add(*sweptTo))
		}
		ingest := t0.Add(x.arrive)
		pp := payload.Position{Lat: x.p.lat, Lon: x.p.lon, TsNs: x.stamp, HasTs: x.hasStamp}
		pg := engine.NewPing(cfg.Clamper(), x.dev, &pp, ingest)
		proc.Advance(ingest)
		proc.Ingest(&pg)
		proc.Advance(ingest)
	}
}

func finish(proc *Processor, sweptTo *time.Duration) {
	for end := *sweptTo + 20*time.Minute; *sweptTo < end; *sweptTo += 250 * time.Millisecond {
		proc.Advance(t0.Add(*sweptTo))
		proc.Sweep(t0.Add(*sweptTo))
	}
}

// TestPropertySnapshotResumesExactly is the checkpoint guarantee of the
// scale-out worker: a processor restored from a snapshot (through a byte
// encoding) and fed the rest of the stream decides exactly what the
// processor it was taken of decides, every field of every transition and
// late ping, whatever the devices' clocks did before the cut.
func TestPropertySnapshotResumesExactly(t *testing.T) {
	set := mustFences(t, testFences)
	fences := func() *fence.Set { return set }
	rapid.Check(t, func(t *rapid.T) {
		cfg := engine.DefaultConfig()
		cfg.Shards = 1
		if rapid.Bool().Draw(t, "no_history") {
			cfg.History = 0
		}
		s := clockStream(t)
		cut := rapid.IntRange(0, len(s)).Draw(t, "cut")

		var want recorder
		a, err := NewProcessor(cfg, t0, fences, &want, nil)
		if err != nil {
			t.Fatal(err)
		}
		var sa time.Duration
		runStream(cfg, a, s, 0, len(s), &sa)
		finish(a, &sa)

		var got recorder
		b, err := NewProcessor(cfg, t0, fences, &got, nil)
		if err != nil {
			t.Fatal(err)
		}
		var sb time.Duration
		runStream(cfg, b, s, 0, cut, &sb)
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(b.Snapshot()); err != nil {
			t.Fatal(err)
		}
		var snap snapshot.State
		if err := gob.NewDecoder(&buf).Decode(&snap); err != nil {
			t.Fatal(err)
		}
		c, err := RestoreProcessor(cfg, t0, fences, &got, nil, &snap)
		if err != nil {
			t.Fatal(err)
		}
		if c.Devices() != b.Devices() || c.Buffered() != b.Buffered() || c.Deferred() != b.Deferred() {
			t.Fatalf("restored %d devices, %d buffered, %d deferred; snapshot of %d, %d, %d",
				c.Devices(), c.Buffered(), c.Deferred(), b.Devices(), b.Buffered(), b.Deferred())
		}
		runStream(cfg, c, s, cut, len(s), &sb)
		finish(c, &sb)

		if g, w := fmt.Sprintf("%+v", got.trans), fmt.Sprintf("%+v", want.trans); g != w {
			t.Fatalf("transitions after restoring at ping %d of %d:\n got  %v\n want %v", cut, len(s), got.lines(), want.lines())
		}
		if g, w := fmt.Sprintf("%+v", got.late), fmt.Sprintf("%+v", want.late); g != w {
			t.Fatalf("late pings after restoring at ping %d of %d:\n got  %v\n want %v", cut, len(s), g, w)
		}
	})
}

// A snapshot holds every field of the state it is taken of: a field added
// to the device record, a fence state, a history point or the clock model
// without a place in the snapshot fails here, not in a worker's hand-over.
func TestSnapshotCoversEveryStateField(t *testing.T) {
	for _, c := range []struct {
		typ   reflect.Type
		snap  reflect.Type
		extra int // state fields the snapshot keeps elsewhere
	}{
		// slot is the index in snapshot.State.Devices (one more); clk is Clock;
		// the embedded History is Hist and Late (one fewer); Owed is the
		// processor's DWELLs owed apart to the device (one fewer). Fence
		// states, history points and late batches are in it as they are.
		{reflect.TypeFor[device](), reflect.TypeFor[snapshot.Device](), -1},
		{reflect.TypeFor[history.History](), reflect.TypeFor[struct{ Hist, Late int }](), 0},
	} {
		if got, want := c.snap.NumField()+c.extra, c.typ.NumField(); got != want {
			t.Errorf("%v has %d fields, %v covers %d: put the new state in the snapshot (and its restore)", c.typ, want, c.snap, got)
		}
	}
	// clock.Model's own test covers the model (clock/snapshot_internal_test.go).
}

// TestPropertyAdvanceThroughDecidesAsIfOnTime is what lets a scale-out
// partition, advanced only when one of its messages comes, decide as a
// single box whose owner fires every deadline on time: with
// AdvanceThrough the transitions and late pings (all but the wall-clock
// instant of the decision) do not depend on how often time is advanced.
func TestPropertyAdvanceThroughDecidesAsIfOnTime(t *testing.T) {
	set := mustFences(t, testFences)
	fences := func() *fence.Set { return set }
	rapid.Check(t, func(t *rapid.T) {
		cfg := engine.DefaultConfig()
		s := clockStream(t)
		run := func(extra func(prev, next time.Duration) []time.Duration) (string, string) {
			var rec recorder
			p, err := NewProcessor(cfg, t0, fences, &rec, nil)
			if err != nil {
				t.Fatal(err)
			}
			var prev time.Duration
			for _, x := range s {
				for _, at := range extra(prev, x.arrive) {
					p.AdvanceThrough(t0.Add(at))
				}
				ingest := t0.Add(x.arrive)
				pp := payload.Position{Lat: x.p.lat, Lon: x.p.lon, TsNs: x.stamp, HasTs: x.hasStamp}
				pg := engine.NewPing(cfg.Clamper(), x.dev, &pp, ingest)
				p.AdvanceThrough(ingest)
				p.Ingest(&pg)
				p.Advance(ingest)
				prev = x.arrive
			}
			p.AdvanceThrough(t0.Add(prev + 20*time.Minute))
			var tr, late strings.Builder
			for _, x := range rec.trans {
				fmt.Fprintf(&tr, "%s %s %v %d %v; ", x.Device, x.Fence, x.Type, x.Event, x.Historic)
			}
			for _, l := range rec.late {
				fmt.Fprintf(&late, "%s %d %v; ", l.Ping.Device, l.Ping.Event, l.Reason)
			}
			return tr.String(), late.String()
		}
		seldom := func(_, _ time.Duration) []time.Duration { return nil }
		often := func(prev, next time.Duration) []time.Duration {
			var out []time.Duration
			for at := prev; at < next && len(out) < 50; at += ms(rapid.IntRange(1, 2000).Draw(t, "tick_ms")) {
				out = append(out, at)
			}
			return out
		}
		wt, wl := run(seldom)
		gt, gl := run(often)
		if gt != wt {
			t.Fatalf("transitions, advanced often:\n %s\nadvanced at pings only:\n %s", gt, wt)
		}
		if gl != wl {
			t.Fatalf("late pings, advanced often:\n %s\nadvanced at pings only:\n %s", gl, wl)
		}
	})
}
