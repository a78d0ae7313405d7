package evaluator

import (
	"slices"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
)

// Introspection: a read-only look at one device, or at every device, taken
// by the processor's owner (sharded.Engine runs it on the owning shard like
// any other per-device work), so the per-device path takes no lock and
// keeps no extra memory for it. Everything here is a copy: the views stay
// valid after the processor is let go.

// DeviceView is one device's engine state at one instant.
type DeviceView struct {
	Device string
	// Taken is the server's wall clock when the view was taken.
	Taken time.Time
	// Hold is the device's allowed lateness.
	Hold time.Duration
	// HighWater, Watermark and Committed are on the device's timeline
	// (its stamps with detected steps taken out); zero before any ping.
	// Pings stamped after Watermark wait in the buffer; those at or
	// before Committed are late.
	HighWater, Watermark, Committed time.Time
	// WatermarkLag is how far the watermark trails the server's clock,
	// with the device's clock offset taken out: about the time since the
	// device's last ping plus the hold. Zero before any ping.
	WatermarkLag time.Duration
	// ClockOffset is the device's clock minus the server's, as learned
	// (what transitions carry as clock_offset_ms); ClockShift the sum of
	// the clock steps detected; ClockState one of unknown, learning,
	// locked, stepping.
	ClockOffset time.Duration
	ClockShift  time.Duration
	ClockState  string
	// Buffered pings wait in the reorder buffer (of BufferCap); Deferred
	// late pings wait to be reconciled into the history.
	Buffered, BufferCap, Deferred int
	// Evaluated counts the pings the state machine has seen (wrapping at
	// 2³²); LastArrival is when the ping that set HighWater arrived.
	Evaluated   uint32
	LastArrival time.Time
	// Lat, Lon: the last position evaluated (rounded to 1e-7° like every
	// ping); HasPosition is false until one was.
	Lat, Lon    float64
	HasPosition bool
	// Pending are the buffered pings in event order; History the
	// committed pings the device's history keeps, oldest first.
	Pending []PendingPing
	History []CommittedPing
	// Received are the pings that arrived since the device was first
	// inspected (the last 32, in arrival order), with their stamps as
	// sent and why each was clamped: inspecting a device starts keeping
	// them, for ten minutes after the last look.
	Received []ReceivedPing
	// Fences is the device's state per fence it is or was just in.
	Fences []FenceView
}

// PendingPing is a ping waiting in a reorder buffer.
type PendingPing struct {
	Event  time.Time // on the device's timeline
	Stamp  time.Time // the device's clock reading (for a clamped ping, the model's)
	Ingest time.Time // the server's wall clock at ingest
	Clamp  clock.ClampReason
	Lat    float64
	Lon    float64
}

// CommittedPing is a ping the state machine has seen, as its device's
// history keeps it.
type CommittedPing struct {
	Event    time.Time // on the device's timeline
	Ingest   time.Time
	Lat, Lon float64
}

// FenceView is a device's state in one fence.
type FenceView struct {
	Fence   string
	Inside  bool
	Dwelled bool
	// Since is the event time of the ENTER (inside), on the device's
	// timeline.
	Since time.Time
}

// DeviceSummary is the part of a device's state the fleet view sorts on,
// without its pings.
type DeviceSummary struct {
	Device       string
	WatermarkLag time.Duration
	ClockOffset  time.Duration
	ClockState   string
	Buffered     int
	Deferred     int
	Evaluated    uint32
	LastArrival  time.Time
	Lat, Lon     float64
	HasPosition  bool
	Inside       []string // fences the device is inside, by ID
}

// Inspect returns a view of device's state at now, or false when the
// processor holds none (never seen, or evicted). It does not create the
// device; it starts keeping the device's arrivals for the next look (see
// DeviceView.Received).
func (p *Processor) Inspect(device string, now time.Time) (DeviceView, bool) {
	d := p.devices[device]
	if d == nil {
		return DeviceView{}, false
	}
	v := p.view(d, now)
	v.Received = p.watchDevice(d, p.at(now)).received()
	return v, true
}

// Summarise calls visit with a summary of up to budget devices from
// index from (0 starts a walk) and returns the index to go on from, or 0
// when the walk is over. A device added or removed between calls may be
// missed or, rarely, seen twice. visit must not keep the summary.
func (p *Processor) Summarise(from, budget int, now time.Time, visit func(*DeviceSummary)) int {
	var sum DeviceSummary
	end := min(from+budget, len(p.all))
	for i := from; i < end; i++ {
		p.summarise(p.all[i], now, &sum)
		visit(&sum)
	}
	if end >= len(p.all) {
		return 0
	}
	return end
}

// wallOf converts a processor-relative instant to the wall clock.
func (p *Processor) wallOf(at int64) time.Time { return p.base.Add(time.Duration(at)) }

// timeOf is a timeline instant as a time, zero for noTime.
func timeOf(ns int64) time.Time {
	if ns == noTime {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// lag is how far d's watermark trails the server's clock at now.
func lag(d *device, now time.Time) time.Duration {
	if d.wm == noTime {
		return 0
	}
	return time.Duration(now.UnixNano() - (d.wm - d.clk.Off()))
}

func (p *Processor) summarise(d *device, now time.Time, s *DeviceSummary) {
	*s = DeviceSummary{
		Device:       d.id,
		WatermarkLag: lag(d, now),
		ClockOffset:  time.Duration(d.clk.Off() + d.clk.Shift()),
		ClockState:   clock.StateNames[d.clk.State()],
		Buffered:     len(d.buf),
		Evaluated:    d.seq,
		Lat:          degrees(d.lat),
		Lon:          degrees(d.lon),
		HasPosition:  d.seq > 0 || d.lat != 0 || d.lon != 0,
		Inside:       s.Inside[:0],
	}
	if d.late != nil {
		s.Deferred = len(d.late.pings)
	}
	if d.high != noTime {
		s.LastArrival = p.wallOf(d.highAt)
	}
	for i := range d.states {
		if d.states[i].inside {
			s.Inside = append(s.Inside, d.states[i].fence)
		}
	}
}

func (p *Processor) view(d *device, now time.Time) DeviceView {
	v := DeviceView{
		Device:       d.id,
		Taken:        now,
		Hold:         time.Duration(d.hold()),
		HighWater:    timeOf(d.high),
		Watermark:    timeOf(d.wm),
		Committed:    timeOf(d.done),
		WatermarkLag: lag(d, now),
		ClockOffset:  time.Duration(d.clk.Off() + d.clk.Shift()),
		ClockShift:   time.Duration(d.clk.Shift()),
		ClockState:   clock.StateNames[d.clk.State()],
		Buffered:     len(d.buf),
		BufferCap:    p.cfg.BufferCap,
		Evaluated:    d.seq,
		Lat:          degrees(d.lat),
		Lon:          degrees(d.lon),
		HasPosition:  d.seq > 0 || d.lat != 0 || d.lon != 0,
	}
	if d.high != noTime {
		v.LastArrival = p.wallOf(d.highAt)
	}
	if d.late != nil {
		v.Deferred = len(d.late.pings)
	}
	for i := range d.buf {
		h := &d.buf[i]
		v.Pending = append(v.Pending, PendingPing{
			Event: timeOf(h.Event), Stamp: timeOf(h.Stamp), Ingest: time.Unix(0, h.Wall),
			Clamp: h.Clamp, Lat: h.Lat, Lon: h.Lon,
		})
	}
	slices.SortFunc(v.Pending, func(a, b PendingPing) int { return a.Event.Compare(b.Event) })
	for i := range d.hist {
		h := &d.hist[i]
		v.History = append(v.History, CommittedPing{Event: timeOf(h.event), Ingest: time.Unix(0, h.wall), Lat: degrees(h.lat), Lon: degrees(h.lon)})
	}
	for i := range d.states {
		st := &d.states[i]
		fv := FenceView{Fence: st.fence, Inside: st.inside, Dwelled: st.dwelled}
		if st.inside {
			fv.Since = timeOf(st.enter)
		}
		v.Fences = append(v.Fences, fv)
	}
	return v
}
