package inspect

import (
	"math"
	"slices"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/history"
	"github.com/edgefence/edgefence/evaluator/presence"
	"github.com/edgefence/edgefence/evaluator/reorder"
)

// TimeOf is an instant on a device's timeline (Unix ns) as a time in
// UTC, zero for an unset one (math.MinInt64).
func TimeOf(ns int64) time.Time {
	if ns == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

// Pending returns the views of a reorder buffer's pings, in event order
// (nil for none).
func Pending(buf []reorder.Held) []PendingPing {
	var out []PendingPing
	for i := range buf {
		h := &buf[i]
		out = append(out, PendingPing{
			Event: TimeOf(h.Event), Stamp: TimeOf(h.Stamp), Ingest: time.Unix(0, h.Wall),
			Clamp: h.Clamp, Lat: h.Lat, Lon: h.Lon,
		})
	}
	slices.SortFunc(out, func(a, b PendingPing) int { return a.Event.Compare(b.Event) })
	return out
}

// Committed returns the views of a device's history points, oldest
// first (nil for none); set names the fences a point held.
func Committed(points []history.Point, set *fence.Set) []CommittedPing {
	var out []CommittedPing
	for i := range points {
		h := &points[i]
		c := CommittedPing{
			Event: TimeOf(h.Event), Ingest: time.Unix(0, h.Wall),
			Lat: history.Degrees(h.Lat), Lon: history.Degrees(h.Lon), Acc: float64(h.Acc) / 10,
			SetAside: h.Aside(), Rule: RuleReplayed, Standing: h.Still(),
		}
		switch {
		case h.Aside():
			c.Rule = RuleGate
		case h.Settled == history.SettledAtPosition:
			c.Rule = RulePosition
		case h.Settled == history.SettledHeld && h.Gate&history.GateHeld != 0 && h.Still():
			c.Rule = RuleStill
		case h.Settled == history.SettledHeld && h.Gate&history.GateHeld != 0:
			c.Rule = RuleConfirm
		case h.Settled == history.SettledHeld:
			c.Rule = RuleMargin
		case h.Settled == history.SettledKept:
			c.Rule = RuleKept
		}
		if c.Rule != RulePosition && c.Rule != RuleGate && c.Rule != RuleReplayed {
			for _, r := range h.Held {
				if r == 0 {
					continue
				}
				if f := set.ByRank(int(r) - 1); f != nil {
					c.Held = append(c.Held, f.ID)
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// Fences returns the views of a device's fence states (nil for none).
func Fences(states presence.States) []FenceView {
	var out []FenceView
	for i := range states {
		st := &states[i]
		fv := FenceView{Fence: st.Fence, Inside: st.Inside, Dwelled: st.Dwelled}
		if st.Inside {
			fv.Since = TimeOf(st.Enter)
		}
		out = append(out, fv)
	}
	return out
}

// Inside appends to dst the IDs of the fences the device is inside.
func Inside(dst []string, states presence.States) []string {
	for i := range states {
		if states[i].Inside {
			dst = append(dst, states[i].Fence)
		}
	}
	return dst
}
