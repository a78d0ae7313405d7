package history

import (
	"math"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/reorder"
)

// History is a device's committed points, oldest first, and its batch
// of late pings waiting to be placed among them (usually nil). The
// engine's device record embeds it: 32 bytes.
type History struct {
	Points []Point
	Late   *Batch
}

// Commit records a committed point, dropping what falls out of the
// history: points more than window older than the newest, and the oldest
// beyond points while no late batch waits to be placed among them. A
// redelivered copy of the newest point is not kept. It reports whether
// it dropped any.
func (h *History) Commit(pt Point, window int64, points int) (dropped bool) {
	if n := len(h.Points); n > 0 && h.Points[n-1].Event == pt.Event && h.Points[n-1].Lat == pt.Lat && h.Points[n-1].Lon == pt.Lon {
		return false // a redelivered copy: it would only crowd the history
	}
	if h.Points == nil {
		h.Points = make([]Point, 0, 1) // most devices keep one or a few
	}
	if n := len(h.Points); n >= points && n == cap(h.Points) && h.Late == nil {
		// Trim would drop the oldest after the append: drop it first, so
		// that a full history never doubles its array for one point.
		dropped = true
		h.Points = h.Points[:copy(h.Points, h.Points[1:])]
	}
	h.Points = append(h.Points, pt)
	return h.Trim(window, points) || dropped
}

// Trim drops the points more than window older than the newest and the
// oldest beyond points, unless a late batch waits to be placed among
// them. It reports whether it dropped any.
func (h *History) Trim(window int64, points int) bool {
	if h.Late != nil || len(h.Points) == 0 {
		return false
	}
	cut := 0
	horizon := h.Points[len(h.Points)-1].Event - window
	for cut < len(h.Points)-1 && (len(h.Points)-cut > points || h.Points[cut].Event < horizon) {
		cut++
	}
	if cut == 0 {
		return false
	}
	h.Points = h.Points[:copy(h.Points, h.Points[cut:])]
	return true
}

// Seen reports whether a ping at event and position lat, lon is among
// the points, the buffered pings buf or the late batch: a redelivered
// copy (a step back reuses stamps, not positions too).
func (h *History) Seen(buf []reorder.Held, event int64, lat, lon float64) bool {
	for i := range h.Points {
		if pt := &h.Points[i]; pt.Event == event && pt.Lat == Fixed(lat) && pt.Lon == Fixed(lon) {
			return true
		}
	}
	for i := range buf {
		if b := &buf[i]; b.Event == event && b.Lat == lat && b.Lon == lon {
			return true
		}
	}
	if h.Late != nil {
		for i := range h.Late.Pings {
			if l := &h.Late.Pings[i]; l.Event == event && l.Lat == lat && l.Lon == lon {
				return true
			}
		}
	}
	return false
}

// Gap returns how far event lies from the nearest of the device's pings
// that are committed, buffered (buf) or waiting in the late batch (but
// the batch's ping at index skip), and whether it lies between two of
// them: a tracker's fixes do not crowd each other, and a ping delayed
// past the others leaves a hole among them.
func (h *History) Gap(buf []reorder.Held, event int64, skip int) (g int64, between bool) {
	lo, hi := int64(math.MaxInt64), int64(math.MaxInt64) // nearest before, after
	near := func(e int64) {
		if e > event {
			hi = min(hi, e-event)
		} else {
			lo = min(lo, event-e)
		}
	}
	for i := range h.Points {
		near(h.Points[i].Event)
	}
	for i := range buf {
		near(buf[i].Event)
	}
	if h.Late != nil {
		for i := range h.Late.Pings {
			if i != skip {
				near(h.Late.Pings[i].Event)
			}
		}
	}
	return min(lo, hi), lo != math.MaxInt64 && hi != math.MaxInt64
}

// FillsHole reports whether a ping at event old on the clock generation
// before a step, or at event cur on the current one, fills a hole the
// old generation left rather than crowding the current one's pings (the
// batch's ping at index skip is the one placed; buf is the buffer).
func (h *History) FillsHole(buf []reorder.Held, old, cur int64, skip int) bool {
	gOld, between := h.Gap(buf, old, skip)
	gCur, _ := h.Gap(buf, cur, skip)
	return between && gOld > gCur
}

// LateBefore reports whether a late ping stamped before event waits to
// be placed.
func (h *History) LateBefore(event int64) bool {
	if h.Late == nil {
		return false
	}
	for i := range h.Late.Pings {
		if h.Late.Pings[i].Event < event {
			return true
		}
	}
	return false
}

// InsideBetween returns the index of the first point, not set aside, that
// shows the device inside f at or after from and before until, or -1.
func (h *History) InsideBetween(f *fence.Fence, from, until int64) int {
	for k := range h.Points {
		pt := &h.Points[k]
		if !pt.Aside() && pt.Event >= from && pt.Event < until && f.Contains(Degrees(pt.Lat), Degrees(pt.Lon)) {
			return k
		}
	}
	return -1
}

// Earliest returns the earliest event among pings, or math.MaxInt64 for
// none.
func Earliest(pings []reorder.Held) int64 {
	e := int64(math.MaxInt64)
	for i := range pings {
		e = min(e, pings[i].Event)
	}
	return e
}

// ParkedSpeed is the speed, in m/s, under which a device counts as
// parked: walking pace is 1.4.
const ParkedSpeed = 1.0

// Parked reports whether the device stood still over the points (or is
// not known to have moved): its displacement from the oldest to the
// newest over the time between them. Points the speed gate set aside
// are not counted.
func (h *History) Parked() bool {
	first, last := 0, len(h.Points)-1
	for first <= last && h.Points[first].Aside() {
		first++
	}
	for last > first && h.Points[last].Aside() {
		last--
	}
	if last <= first {
		return true
	}
	a, b := &h.Points[last], &h.Points[first]
	const mPerDeg = 111_320.0
	dy := Degrees(a.Lat-b.Lat) * mPerDeg
	dx := Degrees(a.Lon-b.Lon) * mPerDeg * math.Cos(Degrees(a.Lat)*math.Pi/180)
	secs := float64(a.Event-b.Event) / 1e9
	return dx*dx+dy*dy <= ParkedSpeed*ParkedSpeed*secs*secs
}

// Batch holds a device's late pings until they stop coming: a
// store-and-forward backlog is reconciled whole, and pings that turn out
// to be a backward step are put back on the live path.
type Batch struct {
	Pings       []reorder.Held
	First, Last int64 // arrivals of the oldest and newest, processor ns
}

// Add appends a late ping that arrived at now.
func (b *Batch) Add(h *reorder.Held, now int64) {
	if len(b.Pings) == 0 {
		b.First = now
	}
	b.Pings = append(b.Pings, *h)
	b.Last = now
}

// Due reports whether b is to be reconciled at now: no late ping came
// for wait, or its first has waited 4×wait (a device that keeps sending
// the odd late ping).
func (b *Batch) Due(now int64, wait int64) bool {
	return now-b.Last >= wait || now-b.First >= 4*wait
}

// DueTelling reports whether b is to be reconciled at now: it is Due, and
// no backward step is being told from delayed pings (pending, the clock
// model's clock.Model.Pending, ≤ −2: two or more agree, its pings may
// yet move), unless that has taken twice as long as a batch may wait.
// One behind ping alone is most often a delayed one, but a batch still
// taking late pings (due only because its first has waited long: a short
// hold makes a device's every few pings late) of a device whose live
// pings go on (live: one came since the batch began) waits for the next
// one to say which: placed on the old clock, a step's first ping lands
// among the pings fixed before the step.
func (b *Batch) DueTelling(now, wait int64, pending int, live bool) bool {
	if (pending <= -2 || pending < 0 && live && now-b.Last < wait) && now-b.First < 8*wait {
		return false
	}
	return b.Due(now, wait)
}

// Clone returns a copy of b that shares no memory with it.
func (b *Batch) Clone() *Batch {
	return &Batch{Pings: append([]reorder.Held(nil), b.Pings...), First: b.First, Last: b.Last}
}

// Pool keeps emptied batches, so that reconciling does not allocate.
type Pool struct{ spare []*Batch }

// Get returns a spare batch, or a new one.
func (p *Pool) Get() *Batch {
	if n := len(p.spare); n > 0 {
		b := p.spare[n-1]
		p.spare = p.spare[:n-1]
		return b
	}
	return &Batch{}
}

// Put empties b and keeps it for Get, unless its array holds more than
// maxPings.
func (p *Pool) Put(b *Batch, maxPings int) {
	clear(b.Pings)
	b.Pings = b.Pings[:0]
	if cap(b.Pings) <= maxPings {
		p.spare = append(p.spare, b)
	}
}
