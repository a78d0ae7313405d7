package evaluator

import (
	"fmt"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/history"
	"github.com/edgefence/edgefence/evaluator/hold"
	"github.com/edgefence/edgefence/evaluator/presence"
	"github.com/edgefence/edgefence/evaluator/reorder"
	"github.com/edgefence/edgefence/evaluator/snapshot"
	"github.com/edgefence/edgefence/evaluator/stats"
)

// Snapshot returns the processor's device state. The result shares no
// memory with the processor.
func (p *Processor) Snapshot() *snapshot.State {
	s := &snapshot.State{Devices: make([]snapshot.Device, len(p.all)), Cursor: p.cursor}
	for i, d := range p.all {
		ds := snapshot.Device{
			ID: d.id, Buf: append([]reorder.Held(nil), d.buf...), Trimmed: d.trimmed,
			Clock: d.clk.Snapshot(), Gate: d.gate, Spot: d.spot, High: d.high, WM: d.wm, Done: d.done, HighAt: d.highAt,
			HoldUs: d.holdUs, Seq: d.seq, Lat: d.lat, Lon: d.lon, Hold: d.est.Bits(), Acc: d.acc,
			Recent: d.recent,
		}
		ds.States = append([]presence.State(nil), d.states...)
		ds.Hist = append([]history.Point(nil), d.Points...)
		ds.Owed = append([]presence.Owed(nil), p.owed[d]...)
		if d.Late != nil {
			ds.Late = d.Late.Clone()
		}
		s.Devices[i] = ds
	}
	for _, t := range p.timers.All() {
		s.Timers = append(s.Timers, snapshot.Timer{At: t.At, Device: t.Of.slot})
	}
	for _, t := range p.dwells.All() {
		s.Dwells = append(s.Dwells, snapshot.Timer{At: t.At, Device: t.Of.slot})
	}
	return s
}

// RestoreProcessor returns a processor (see NewProcessor) holding the
// device state s was taken of.
func RestoreProcessor(cfg engine.Config, base time.Time, fences func() *fence.Set, sink engine.Sink, m *stats.Metrics, s *snapshot.State) (*Processor, error) {
	p, err := NewProcessor(cfg, base, fences, sink, m)
	if err != nil {
		return nil, err
	}
	for i := range s.Devices {
		ds := &s.Devices[i]
		if _, dup := p.devices[ds.ID]; dup {
			return nil, fmt.Errorf("restore processor: device %q twice in the snapshot", ds.ID)
		}
		d := &device{
			id: ds.ID, buf: reorder.Heap(append([]reorder.Held(nil), ds.Buf...)), trimmed: ds.Trimmed,
			clk: clock.RestoreModel(&ds.Clock), gate: ds.Gate, spot: ds.Spot, high: ds.High, wm: ds.WM, done: ds.Done, highAt: ds.HighAt,
			holdUs: ds.HoldUs, seq: ds.Seq, slot: int32(i), lat: ds.Lat, lon: ds.Lon, est: hold.FromBits(ds.Hold),
			acc: ds.Acc, recent: ds.Recent,
		}
		d.buf.Init()
		d.states = append(d.states, ds.States...)
		d.Points = append(d.Points, ds.Hist...)
		for _, o := range ds.Owed {
			p.owed.Add(d, o)
		}
		if ds.Late != nil {
			d.Late = ds.Late.Clone()
			p.deferred += len(d.Late.Pings)
		}
		p.buffered += len(d.buf)
		p.devices[d.id] = d
		p.all = append(p.all, d)
	}
	for _, t := range s.Timers {
		if t.Device < 0 || int(t.Device) >= len(p.all) {
			return nil, fmt.Errorf("restore processor: a deadline names device %d of %d", t.Device, len(p.all))
		}
		p.timers.Push(t.At, p.all[t.Device])
	}
	for _, t := range s.Dwells {
		if t.Device < 0 || int(t.Device) >= len(p.all) {
			return nil, fmt.Errorf("restore processor: a DWELL deadline names device %d of %d", t.Device, len(p.all))
		}
		p.dwells.Push(t.At, p.all[t.Device])
	}
	p.cursor = min(max(s.Cursor, 0), len(p.all))
	return p, nil
}
