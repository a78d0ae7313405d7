package history

import (
	"cmp"
	"math"
	"slices"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/reorder"
)

// Rekey takes out of the late batch, appending them to dst, the pings
// that belong to the generation a step of clk by shift just began,
// re-keyed to it: the one in which a ping's transit delay is the smaller
// that is not negative (see clock.Model.Newer), whenever it came. The
// others were delayed pings of the generation before and stay. buf is the
// device's reorder buffer, high its high-water mark, behindTol how far
// behind the model a fresh ping may be; idx is scratch, returned for
// reuse. The caller frees the batch when it is left empty.
//
// Re-keyed by delay first; but a ping that arrived before a fresh ping of
// the old generation could have been fixed is the old one's, and so is
// one late on both clocks that lands among the new generation's pings on
// the new one but fills a hole on the old one: the network held it back
// longer than the step (both delays are plausible then; the pings around
// it are not). A backlog's pings are its burst's: one far behind on
// either clock stays in the batch as it was, and the burst's stamps say
// where its clock stepped (MendBursts). Those with the smaller delays on
// the new clock are placed first: of two that would crowd each other
// there, the more delayed one is the old generation's.
func (h *History) Rekey(dst []reorder.Held, idx []int, buf []reorder.Held, clk *clock.Model, shift, high, behindTol int64) ([]reorder.Held, []int) {
	b := h.Late
	idx = idx[:0]
	for i := range b.Pings {
		if p := &b.Pings[i]; keyedByStamp(p.Clamp) && clk.Newer(p.Event, p.Wall, shift) {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(i, j int) int {
		return cmp.Compare(b.Pings[i].Wall-b.Pings[i].Event, b.Pings[j].Wall-b.Pings[j].Event)
	})
	var fresh int64 = math.MinInt64 // the latest arrival of the old generation's fresh pings
	for i := range h.Points {
		fresh = max(fresh, h.Points[i].Wall)
	}
	for i := range buf {
		fresh = max(fresh, buf[i].Wall)
	}
	for n, i := range idx {
		p := &b.Pings[i]
		age := p.Wall + clk.Off() - p.Event
		if age >= clock.BacklogAge && age+shift >= clock.BacklogAge {
			idx[n] = -1 // a backlog's on either clock: its burst places it (MendBursts)
		} else if p.Event <= high && age < clock.BacklogAge &&
			(clk.Overtaken(p.Wall, fresh, behindTol) || clk.Late(p.Event-shift, p.Wall) && h.FillsHole(buf, p.Event, p.Event-shift, i)) {
			idx[n] = -1
		} else {
			p.Event -= shift
		}
	}
	slices.Sort(idx)
	k, n := 0, 0
	for i, p := range b.Pings {
		for n < len(idx) && idx[n] < i {
			n++
		}
		if n < len(idx) && idx[n] == i {
			dst = append(dst, p)
			continue
		}
		b.Pings[k] = p
		k++
	}
	b.Pings = b.Pings[:k]
	return dst, idx
}

// keyedByStamp reports whether a ping clamped for reason r has its event
// from its stamp and the model's shift, so that a step re-keys it: a
// counting clock's pings are on its own timeline (clock.Model.BootTimeline)
// and a replaced stamp's on the model's clock at ingest, which no step of
// the device's clock moves.
func keyedByStamp(r clock.ClampReason) bool {
	return r == clock.ClampNone || r == clock.ClampWeekRollover
}

// TakeStepPings moves out of b, appending them to dst, the pings that may
// begin a step back, for a batch placed at its cap while late pings and
// live ones still come: they came within wait of now and are behind the
// clock model (offset off) by more than a delay it takes as fresh (tol),
// but less than a backlog's are (their burst places them). Placed on the
// old clock they would land among the pings fixed before the step; a
// straggler of the old clock coming after them undoes the step's
// candidate, so the model cannot tell yet. They wait in the next batch
// (Refill).
func (b *Batch) TakeStepPings(dst []reorder.Held, now, wait, off, tol int64) []reorder.Held {
	k := 0
	for _, p := range b.Pings {
		behind := off - (p.Event - p.Wall)
		if p.Clamp == clock.ClampNone && now-p.Arrived < wait && behind > tol && behind < clock.BacklogAge {
			dst = append(dst, p)
			continue
		}
		b.Pings[k] = p
		k++
	}
	clear(b.Pings[k:])
	b.Pings = b.Pings[:k]
	return dst
}

// Refill makes pings (those TakeStepPings took, none placed since) the
// batch's again, its arrivals theirs.
func (b *Batch) Refill(pings []reorder.Held) {
	b.Pings = append(b.Pings[:0], pings...)
	b.First, b.Last = b.Pings[0].Arrived, b.Pings[0].Arrived
	for i := range b.Pings {
		b.First, b.Last = min(b.First, b.Pings[i].Arrived), max(b.Last, b.Pings[i].Arrived)
	}
}
