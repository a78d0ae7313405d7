package history

import (
	"math"
	"testing"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/reorder"
)

// square is a fence whose west edge is at 13.400°E, which changes on one
// fix clear of its margin (the margin alone: "confirm": false).
const square = `{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"sq","properties":{"confirm":false},"geometry":{"type":"Polygon","coordinates":[[[13.400,52.500],[13.410,52.500],[13.410,52.510],[13.400,52.510],[13.400,52.500]]]}}]}`

// east returns a point d metres east of the square's west edge, at
// event ns, with an accuracy of 1 m.
func east(d float64, event int64) Point {
	lon := 13.400 + d/(6371008.8*math.Pi/180*math.Cos(52.505*math.Pi/180))
	return PointOf(event, 0, 52.505, lon, 10)
}

// late is a late ping at pt.
func late(pt Point) reorder.Held {
	return reorder.Held{Event: pt.Event, Lat: Degrees(pt.Lat), Lon: Degrees(pt.Lon), Acc: pt.Acc}
}

// Fixes 1 m inside ±1 m, within the 2 m margin, kept a device outside. A
// late fix clear inside among them changes every one after it: its ENTER
// is the last change, and the live state is to follow it (Final). A
// committed fix clear inside after them published the ENTER: then it
// stands for the late one's (Anchor), and the late fix is not kept.
func TestChangesFollowTheHeldFixesToTheNewest(t *testing.T) {
	set, err := fence.Parse([]byte(square))
	if err != nil {
		t.Fatal(err)
	}
	search := fence.NewSearcher()
	var hist []Point
	for i := range 5 {
		pt := east(1, int64(i))
		pt.Settled = SettledHeld // from nothing: outside
		hist = append(hist, pt)
	}
	pings := []reorder.Held{late(east(2.5, 1))} // between hist[1] and hist[2]
	var c Changes
	merged := Merge(nil, nil, hist, pings)
	got := c.Of(set, search, 2, 100, hist, true, 1, merged)
	if len(got) != 1 || !got[0].Enter || got[0].At != 2 || !got[0].Final || got[0].Anchor != -1 {
		t.Fatalf("got %+v, want one Final ENTER at 2", got)
	}
	for i, pt := range merged[2:] {
		if pt.Settled != SettledAtPosition {
			t.Errorf("point %d settled %d, want at its position (inside)", i+2, pt.Settled)
		}
	}

	enter := east(2.5, 10)
	enter.Settled = SettledAtPosition
	hist = append(hist, enter) // published the ENTER
	merged = Merge(nil, nil, hist, pings)
	got = c.Of(set, search, 2, 100, hist, true, 1, merged)
	if len(got) != 1 || !got[0].Enter || got[0].At != 2 || got[0].Final || got[0].Anchor != 6 {
		t.Fatalf("got %+v, want one ENTER at 2 that the one at 6 stands for", got)
	}
	kept := Kept(merged)
	if len(kept) != len(hist) {
		t.Fatalf("kept %d points, want the %d committed ones", len(kept), len(hist))
	}
	for i, pt := range kept[2:5] {
		if pt.Settled != SettledHeld {
			t.Errorf("point %d settled %d, want held (outside, as published)", i+2, pt.Settled)
		}
	}
}

// A point records the fences its settling held, up to two, and a replay
// starts from its state exactly: the fences containing it, its held ones
// turned over. A recorded fence whose edge is not within the point's
// margin (a reload renumbered them) is not trusted: the points before it
// are replayed instead.
func TestPointRecordsItsHeldFences(t *testing.T) {
	set, err := fence.Parse([]byte(square))
	if err != nil {
		t.Fatal(err)
	}
	search := fence.NewSearcher()
	sq := set.ByID("sq")
	held := east(1, 0) // inside by 1 m ±1 m, kept outside
	held.Record([]*fence.Fence{sq}, nil)
	if held.Settled != SettledHeld || held.Held != [2]uint16{uint16(sq.Rank() + 1), 0} {
		t.Fatalf("recorded %d %v, want the square held", held.Settled, held.Held)
	}
	hits := search.Contains(set, Degrees(held.Lat), Degrees(held.Lon))
	if state, ok := recorded(nil, hits, set, 2, 100, &held); !ok || len(state) != 0 {
		t.Fatalf("state %v, want outside", state)
	}
	deep := east(50, 0) // the square does not straddle it: the record is stale
	deep.Settled, deep.Held = SettledHeld, held.Held
	if _, ok := recorded(nil, search.Contains(set, Degrees(deep.Lat), Degrees(deep.Lon)), set, 2, 100, &deep); ok {
		t.Fatal("a record of a fence whose edge is far was trusted")
	}
	// A late fix without accuracy kept for another fence's sake: its record
	// is the published state, whatever its position says.
	kept := east(50, 0)
	kept.Acc, kept.Settled, kept.Held = 0, SettledKept, held.Held
	if state, ok := recorded(nil, search.Contains(set, Degrees(kept.Lat), Degrees(kept.Lon)), set, 2, 100, &kept); !ok || len(state) != 0 {
		t.Fatalf("kept point: state %v (%v), want outside as recorded", state, ok)
	}
	held.setHeld(sq, false)
	if held.Settled != SettledAtPosition || held.Held != [2]uint16{} {
		t.Fatalf("after setHeld(false): %d %v, want at its position", held.Settled, held.Held)
	}
}
