// Package gate is the speed gate (issue 32): a fix farther from the
// device's last accepted fix than its maximum speed could take it, plus
// both fixes' accuracy, is set aside, unless it agrees with the fix just
// before it, itself set aside (two fixes that agree are a device that
// really moved: after an outage, or a fresh lock), or MaxRun fixes before
// it were set aside in a row. A fix whose time is not
// the device's own (a clamped stamp) is not judged on it: it is accepted,
// and the fixes after it are judged from it.
//
// Each fix is judged once, against the fixes before it in event order:
// on release on the live path (State), and among the history's points
// when it comes late (Mark). Both apply Judge, so a late fix is set aside
// exactly when it would have been had it come in order.
package gate

import (
	"math"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/history"
	"github.com/edgefence/edgefence/evaluator/reorder"
)

// Spread is how many times its reported accuracy (the 68 % radius) each of
// two fixes may be off, on top of the distance the device can travel
// between them: 2 is three standard deviations per axis.
const Spread = 2

// Floor is the least slack between two fixes, metres: fixes without an
// accuracy, and quantisation, are not taken for jumps.
const Floor = 20.0

// Fix is what the gate knows of a fix.
type Fix struct {
	Event    int64 // on the device's timeline, Unix ns
	Lat, Lon int32 // fixed point (history.Fixed)
	Acc      uint16
	// Untimed says the fix's event time is not the device's own (a
	// clamped stamp): the distance it may lie from another is not known.
	Untimed bool
}

// FixOf returns the gate's view of a history point.
func FixOf(pt *history.Point) Fix {
	return Fix{Event: pt.Event, Lat: pt.Lat, Lon: pt.Lon, Acc: pt.Acc, Untimed: pt.Gate&history.GateUntimed != 0}
}

// PingFix returns the gate's view of a ping (its position as the history
// keeps it). A stamp replaced by the model's clock makes it untimed.
func PingFix(pg *engine.Ping) Fix {
	return Fix{
		Event: pg.Event, Lat: history.Fixed(pg.Lat), Lon: history.Fixed(pg.Lon), Acc: reorder.AccOf(pg.Acc),
		Untimed: pg.Clamp != clock.ClampNone && pg.Clamp != clock.ClampWeekRollover,
	}
}

// Mark returns the history mark of a fix committed live, set aside or not.
func (f *Fix) Mark(aside bool) history.Gate {
	var g history.Gate
	if f.Untimed {
		g |= history.GateUntimed
	}
	if aside {
		g |= history.GateAside
	}
	return g
}

// Far reports whether b lies farther from a than a device at maxSpeed
// (m/s) can go in the time between them, plus Spread times both fixes'
// accuracies (at least Floor): an impossible jump. Untimed fixes are
// never far.
func Far(maxSpeed float64, a, b *Fix) bool {
	if maxSpeed <= 0 || a.Untimed || b.Untimed {
		return false
	}
	const mPerDeg = 111_320.0
	dy := float64(b.Lat-a.Lat) / history.Scale * mPerDeg
	dx := float64(b.Lon-a.Lon) / history.Scale * mPerDeg * math.Cos(float64(a.Lat)/history.Scale*math.Pi/180)
	dt := math.Abs(float64(b.Event-a.Event)) / 1e9
	reach := maxSpeed*dt + max(Floor, Spread*float64(int(a.Acc)+int(b.Acc))/10)
	return dx*dx+dy*dy > reach*reach
}

// MaxRun is how many fixes in a row may be set aside: the next is
// accepted whatever it implies, so that fixes that never agree (a device
// whose every fix is off, or a test's teleporting one) are still followed,
// and a history of a few points always holds an accepted one.
const MaxRun = 2

// Judge decides fix f given last, the device's last accepted fix (nil:
// none), prev, the fix just before f when that one was set aside (else
// nil), and run, how many fixes were set aside in a row before f: it
// reports whether f is set aside.
func Judge(maxSpeed float64, last, prev, f *Fix, run int) bool {
	if last == nil || run >= MaxRun || !Far(maxSpeed, last, f) {
		return false
	}
	return prev == nil || Far(maxSpeed, prev, f)
}

// State is a device's gate on the live path: its last accepted fix and,
// when the fixes released since were set aside, the newest of them. 40
// bytes; exported for the snapshot (gob).
type State struct {
	LastEvent, AsideEvent int64
	LastLat, LastLon      int32
	AsideLat, AsideLon    int32
	LastAcc, AsideAcc     uint16
	Has                   uint8 // hasLast, lastUntimed
	Run                   uint8 // fixes set aside since the last accepted
}

const (
	hasLast = 1 << iota
	lastUntimed
)

// Judge decides fix f, released next in event order, and reports whether
// it is set aside. maxSpeed 0 accepts every fix.
func (s *State) Judge(maxSpeed float64, f Fix) bool {
	var last, prev *Fix
	if s.Has&hasLast != 0 {
		last = &Fix{Event: s.LastEvent, Lat: s.LastLat, Lon: s.LastLon, Acc: s.LastAcc, Untimed: s.Has&lastUntimed != 0}
	}
	if s.Run > 0 {
		prev = &Fix{Event: s.AsideEvent, Lat: s.AsideLat, Lon: s.AsideLon, Acc: s.AsideAcc}
	}
	if Judge(maxSpeed, last, prev, &f, int(s.Run)) {
		s.AsideEvent, s.AsideLat, s.AsideLon, s.AsideAcc = f.Event, f.Lat, f.Lon, f.Acc
		s.Run++
		return true
	}
	s.Run = 0
	s.LastEvent, s.LastLat, s.LastLon, s.LastAcc = f.Event, f.Lat, f.Lon, f.Acc
	s.Has = hasLast
	if f.Untimed {
		s.Has |= lastUntimed
	}
	return false
}

// Mark judges the late points of pts (a device's history with late pings
// merged in, in event order: those marked history.GateLate) against the
// points before each, as Judge does live, marking those set aside
// history.GateAside; the committed points keep their marks. The late
// points stay marked late for history.Stand. It returns how many it set
// aside.
func Mark(maxSpeed float64, pts []history.Point) int {
	n := 0
	for i := range pts {
		pt := &pts[i]
		if pt.Gate&history.GateLate == 0 {
			continue
		}
		var last, prev *Fix
		run := 0
		for j := i - 1; j >= 0; j-- {
			if !pts[j].Aside() {
				f := FixOf(&pts[j])
				last = &f
				break
			}
			run++
		}
		if run > 0 {
			f := FixOf(&pts[i-1])
			prev = &f
		}
		if f := FixOf(pt); Judge(maxSpeed, last, prev, &f, run) {
			pt.Gate |= history.GateAside
			n++
		}
	}
	return n
}
