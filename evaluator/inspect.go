package evaluator

import (
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/history"
	"github.com/edgefence/edgefence/evaluator/inspect"
)

// Inspect returns a view of device's state at now, or false when the
// processor holds none (never seen, or evicted). It does not create the
// device; it starts keeping the device's arrivals for the next look (see
// inspect.DeviceView.Received).
func (p *Processor) Inspect(device string, now time.Time) (inspect.DeviceView, bool) {
	d := p.devices[device]
	if d == nil {
		return inspect.DeviceView{}, false
	}
	v := d.view(now, p.base, p.cfg.BufferCap, p.fences())
	v.Received = p.watched.Look(d, p.at(now))
	return v, true
}

// Summarise calls visit with a summary of up to budget devices from
// index from (0 starts a walk) and returns the index to go on from, or 0
// when the walk is over. A device added or removed between calls may be
// missed or, rarely, seen twice. visit must not keep the summary.
func (p *Processor) Summarise(from, budget int, now time.Time, visit func(*inspect.DeviceSummary)) int {
	var sum inspect.DeviceSummary
	end := min(from+budget, len(p.all))
	for i := from; i < end; i++ {
		p.all[i].summarise(&sum, now, p.base)
		visit(&sum)
	}
	if end >= len(p.all) {
		return 0
	}
	return end
}

// lag is how far d's watermark trails the server's clock at now.
func lag(d *device, now time.Time) time.Duration {
	if d.wm == noTime {
		return 0
	}
	return time.Duration(now.UnixNano() - (d.wm - d.clk.Off()))
}

// summarise fills s with the device's summary at now; its processor's
// instants count from base.
func (d *device) summarise(s *inspect.DeviceSummary, now, base time.Time) {
	*s = inspect.DeviceSummary{
		Device:       d.id,
		WatermarkLag: lag(d, now),
		ClockOffset:  time.Duration(d.clk.Off() + d.clk.Shift()),
		ClockState:   clock.StateNames[d.clk.State()],
		Buffered:     len(d.buf),
		Evaluated:    d.seq,
		Decided:      d.done != noTime,
		Lat:          history.Degrees(d.lat),
		Lon:          history.Degrees(d.lon),
		HasPosition:  d.seq > 0 || d.lat != 0 || d.lon != 0,
		Acc:          float32(d.acc) / 10,
		Inside:       inspect.Inside(s.Inside[:0], d.states),
	}
	if d.Late != nil {
		s.Deferred = len(d.Late.Pings)
	}
	if d.high != noTime {
		s.LastArrival = base.Add(time.Duration(d.highAt))
	}
}

// view returns the device's full view at now: its processor's instants
// count from base, its buffer holds up to bufCap pings, and set names the
// fences its history is shown against.
func (d *device) view(now, base time.Time, bufCap int, set *fence.Set) inspect.DeviceView {
	v := inspect.DeviceView{
		Device:       d.id,
		Taken:        now,
		Hold:         time.Duration(d.hold()),
		HighWater:    inspect.TimeOf(d.high),
		Watermark:    inspect.TimeOf(d.wm),
		Committed:    inspect.TimeOf(d.done),
		WatermarkLag: lag(d, now),
		ClockOffset:  time.Duration(d.clk.Off() + d.clk.Shift()),
		ClockShift:   time.Duration(d.clk.Shift()),
		ClockState:   clock.StateNames[d.clk.State()],
		Buffered:     len(d.buf),
		BufferCap:    bufCap,
		Evaluated:    d.seq,
		Lat:          history.Degrees(d.lat),
		Lon:          history.Degrees(d.lon),
		HasPosition:  d.seq > 0 || d.lat != 0 || d.lon != 0,
	}
	if d.high != noTime {
		v.LastArrival = base.Add(time.Duration(d.highAt))
	}
	if d.Late != nil {
		v.Deferred = len(d.Late.Pings)
	}
	v.Pending = inspect.Pending(d.buf)
	v.History = inspect.Committed(d.Points, set)
	v.Fences = inspect.Fences(d.states)
	return v
}

// observe records pg's arrival if its device is watched.
func (p *Processor) observe(d *device, pg *engine.Ping, now int64) {
	r := p.watched.Arrival(d, now)
	if r == nil {
		return
	}
	*r = inspect.ReceivedPing{Event: inspect.TimeOf(pg.Event), Ingest: pg.Ingest, Clamp: pg.Clamp, Lat: pg.Lat, Lon: pg.Lon}
	if pg.HasStamp {
		r.Stamp = inspect.TimeOf(pg.Stamp)
	}
}
