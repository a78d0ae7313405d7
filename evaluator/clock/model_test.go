package clock_test

import (
	"math"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
)

// The engine's defaults (package engine, which imports this one): the
// skew tolerance, the hold as the behind tolerance, the largest clock
// offset.
const (
	skew      = int64(2 * time.Second)
	behindTol = int64(500 * time.Millisecond)
	maxOff    = int64(10 * time.Minute)
)

// w0 is the server's wall clock at the first ping (Unix ns); processor
// instants count from it.
var w0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixNano()

// device drives a Model as the processor does: each ping stamped by the
// device's clock (the server's plus off) at the instant it was fixed, and
// received delay later.
type device struct {
	m    clock.Model
	off  int64 // the device's clock minus the server's
	at   int64 // the next ping's fix instant on the server's clock, from w0
	high int64 // the newest timeline instant so far, as the processor keeps it
}

func newDevice(off time.Duration) *device {
	return &device{m: clock.New(), off: int64(off), high: math.MinInt64}
}

// ping sends a ping fixed gap after the previous one, delayed by delay,
// and returns the model's verdict and the ping's timeline instant
// (stamp − shift) minus its arrival's wall clock.
func (d *device) ping(gap, delay time.Duration) (clock.Verdict, int64) {
	d.at += int64(gap)
	stamp := w0 + d.at + d.off
	wall := w0 + d.at + int64(delay)
	v := d.m.Judge(stamp, wall, wall-w0, skew, behindTol, maxOff, d.high)
	// As the processor does after judging a trusted stamp (it moves only
	// a cold boot's provisional anchor, in the boot tests).
	d.m.Reanchor(stamp-d.m.Shift(), wall, wall-w0)
	d.high = max(d.high, stamp-d.m.Shift())
	return v, stamp - d.m.Shift() - wall
}

// learn sends the pings a new device's offset is learned from, a second
// apart, on time.
func (d *device) learn(t *testing.T) {
	t.Helper()
	for range clock.LearnPings {
		if v, _ := d.ping(time.Second, 0); v != clock.Fresh {
			t.Fatalf("learning ping: verdict %v, want Fresh", v)
		}
	}
	if d.m.State() != clock.Locked {
		t.Fatalf("after %d pings: state %v, want Locked", clock.LearnPings, d.m.State())
	}
}

// "A new device is trusted within --max-clock-offset for its first 4
// pings, learning upward only (a first ping that came late says the clock
// is behind)."
func TestNewDeviceLearnsItsOffsetUpwardOnly(t *testing.T) {
	d := newDevice(3 * time.Second) // 3 s ahead of the server
	if !(d.m.State() == clock.Unknown && !d.m.Known()) {
		t.Fatalf("a new model: state %v, known %v", d.m.State(), d.m.Known())
	}
	delays := []time.Duration{800 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond, 50 * time.Millisecond}
	wantOff := []time.Duration{2200 * time.Millisecond, 2900 * time.Millisecond, 2900 * time.Millisecond, 2950 * time.Millisecond}
	for i, delay := range delays {
		if v, _ := d.ping(time.Second, delay); v != clock.Fresh {
			t.Fatalf("ping %d: %v, want Fresh", i, v)
		}
		if got := time.Duration(d.m.Off()); got != wantOff[i] {
			t.Errorf("after ping %d (delay %v): offset %v, want %v", i, delay, got, wantOff[i])
		}
		want := clock.Learning
		if i == len(delays)-1 {
			want = clock.Locked
		}
		if d.m.State() != want {
			t.Errorf("after ping %d: state %v, want %v", i, d.m.State(), want)
		}
	}
	if !d.m.Learned() || d.m.Shift() != 0 {
		t.Fatalf("learned %v, shift %d", d.m.Learned(), d.m.Shift())
	}
}

// A new device's stamp further behind the server than the largest clock
// offset is a backlog: its stamp stands, and it teaches the model nothing.
func TestNewDeviceBacklogTeachesNothing(t *testing.T) {
	d := newDevice(0)
	if v, _ := d.ping(time.Second, time.Duration(maxOff)+time.Second); v != clock.Fresh {
		t.Fatalf("backlog ping: %v, want Fresh", v)
	}
	if d.m.Known() || d.m.State() != clock.Unknown {
		t.Fatalf("a backlog ping was learned from: known %v, state %v", d.m.Known(), d.m.State())
	}
	d.learn(t)
	if d.m.Off() != 0 {
		t.Fatalf("offset %v, want 0", time.Duration(d.m.Off()))
	}
}

// "A stamp more than --skew-tolerance ahead of the model and of the
// server is clamped to the model's clock (ahead), a step candidate."
// A stamp ahead of the model but not of the server is not: a backlog's
// stamps rise toward the server's clock.
func TestStampAheadOfModelAndServerIsAhead(t *testing.T) {
	d := newDevice(-5 * time.Second) // 5 s behind the server
	d.learn(t)
	d.off = -2 * int64(time.Second) // 3 s ahead of the model, still behind the server
	if v, _ := d.ping(time.Second, 0); v != clock.Fresh {
		t.Fatalf("3 s ahead of the model, 2 s behind the server: %v, want Fresh", v)
	}
	if got := time.Duration(d.m.Off()); got != -2*time.Second {
		t.Fatalf("offset %v, want -2s (the filter takes the larger)", got)
	}
	d.off = 1 * int64(time.Second) // 3 s ahead of the model, 1 s ahead of the server
	if v, _ := d.ping(time.Second, 0); v != clock.Fresh {
		t.Fatalf("1 s ahead of the server, within the skew tolerance: %v, want Fresh", v)
	}
	d.off = 4 * int64(time.Second) // 3 s ahead of the model and 4 s of the server
	off := d.m.Off()
	if v, _ := d.ping(time.Second, 0); v != clock.Ahead {
		t.Fatalf("beyond the skew tolerance: %v, want Ahead", v)
	}
	if d.m.Off() != off || d.m.State() != clock.Stepping || d.m.Pending() != 1 {
		t.Fatalf("offset %v (was %v), state %v, pending %d; want the offset kept, Stepping, +1",
			time.Duration(d.m.Off()), time.Duration(off), d.m.State(), d.m.Pending())
	}
	d.off = int64(time.Second)
	if v, _ := d.ping(time.Second, 0); v != clock.Fresh || d.m.Pending() != 0 || d.m.State() != clock.Locked {
		t.Fatalf("a fresh ping after it: %v, pending %d, state %v; want Fresh, 0, Locked", v, d.m.Pending(), d.m.State())
	}
}

// "3 candidate pings that agree (their offsets within 300 ms of the
// freshest's, not in a burst) confirm a step of a second or more, 6 a
// smaller one. A new generation begins and the timeline stays
// continuous."
func TestStepsConfirmedByAgreeingPings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		step  time.Duration
		pings int // the one that confirms
		first clock.Verdict
	}{
		{"forward 5s", 5 * time.Second, 3, clock.Ahead},
		{"forward 5m", 5 * time.Minute, 3, clock.Ahead},
		{"back 1s", -time.Second, 3, clock.Behind},
		{"back 30s", -30 * time.Second, 3, clock.Behind},
		{"back 999ms", -999 * time.Millisecond, 6, clock.Behind},
		{"back 600ms", -600 * time.Millisecond, 6, clock.Behind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDevice(0)
			d.learn(t)
			d.off += int64(tc.step)
			// Delays differ by up to 200 ms: within the step band.
			delays := []time.Duration{100, 0, 200, 50, 150, 0}
			for i := range tc.pings {
				v, _ := d.ping(time.Second, delays[i]*time.Millisecond)
				want := tc.first
				if i == tc.pings-1 {
					want = clock.Stepped
				}
				if v != want {
					t.Fatalf("ping %d of the new clock: %v, want %v", i+1, v, want)
				}
			}
			// The shift is the step as the least delayed candidate saw it.
			if got := time.Duration(d.m.Shift()); got != tc.step {
				t.Errorf("shift %v, want %v", got, tc.step)
			}
			if d.m.State() != clock.Locked || d.m.Pending() != 0 {
				t.Errorf("after the step: state %v, pending %d", d.m.State(), d.m.Pending())
			}
			// Continuous: the new clock's pings land where the model
			// expects them, and are fresh.
			for range 3 {
				v, y := d.ping(time.Second, 0)
				if v != clock.Fresh || y != d.m.Off() {
					t.Fatalf("after the step: %v at %v from the model; want Fresh at 0", v, time.Duration(y-d.m.Off()))
				}
			}
		})
	}
}

// A step forward within the skew tolerance is absorbed by the offset.
func TestSmallForwardStepIsAbsorbed(t *testing.T) {
	d := newDevice(0)
	d.learn(t)
	d.off += int64(1500 * time.Millisecond)
	for range 8 {
		if v, _ := d.ping(time.Second, 0); v != clock.Fresh {
			t.Fatalf("%v, want Fresh", v)
		}
	}
	if d.m.Shift() != 0 || time.Duration(d.m.Off()) != 1500*time.Millisecond {
		t.Fatalf("shift %v, offset %v; want 0, 1.5s", time.Duration(d.m.Shift()), time.Duration(d.m.Off()))
	}
}

// "A rise of the offset by more than the model's noise is such a step,
// and rises within 10 s after it are more of it": a step forward of 1.5 s
// whose first ping came 200 ms late shows as a rise of 1.3 s, and the
// next ping's rise of 200 ms (within the noise) is the rest of it, so a
// stay across it is measured 1.5 s shorter on the timeline. A rise within
// the noise more than 10 s later is the minimum-delay filter learning,
// not more of the step.
func TestRisesSoonAfterAnAbsorbedStepAreMoreOfIt(t *testing.T) {
	d := newDevice(0)
	d.learn(t) // fixed at +1 s … +4 s, on time
	from := w0 + int64(3*time.Second)
	gapped := from + int64(5*time.Second) + int64(1500*time.Millisecond)
	d.off += int64(1500 * time.Millisecond)
	if v, _ := d.ping(time.Second, 200*time.Millisecond); v != clock.Fresh {
		t.Fatalf("first ping after the step: %v, want Fresh (absorbed)", v)
	}
	if v, _ := d.ping(time.Second, 0); v != clock.Fresh {
		t.Fatalf("second ping after the step: %v, want Fresh", v)
	}
	if got := d.m.After(from, int64(5*time.Second)); got != gapped {
		t.Fatalf("5 s after +3 s, across the step: %v on the timeline, want %v (the whole 1.5 s left out)", time.Duration(got-w0), time.Duration(gapped-w0))
	}
	for range 12 {
		d.ping(time.Second, 0)
	}
	d.off += int64(200 * time.Millisecond)
	d.ping(time.Second, 0)
	if got := d.m.After(from, int64(5*time.Second)); got != gapped {
		t.Fatalf("after a rise of 200 ms 13 s later: %v on the timeline, want %v (the step unchanged)", time.Duration(got-w0), time.Duration(gapped-w0))
	}
}

// Pings that disagree with the model but arrive back to back (a backlog
// burst) never confirm a step, however many.
func TestBurstNeverConfirmsAStep(t *testing.T) {
	d := newDevice(0)
	d.learn(t)
	d.off -= int64(3 * time.Second)
	for i := range 50 {
		if v, _ := d.ping(time.Duration(clock.BurstGap)-time.Millisecond, 0); v != clock.Behind {
			t.Fatalf("burst ping %d: %v, want Behind", i, v)
		}
	}
	if d.m.Shift() != 0 || d.m.Pending() != -1 {
		t.Fatalf("shift %v, pending %d; want 0, -1 (begun, never grown)", time.Duration(d.m.Shift()), d.m.Pending())
	}
}

// A delayed ping of the old clock that begins a candidate does not make
// the step's size: a more delayed ping begins it again (the step's pings
// are further behind), and the step confirmed is theirs.
func TestStragglerDoesNotSizeTheStep(t *testing.T) {
	d := newDevice(0)
	d.learn(t)
	if v, _ := d.ping(time.Second, time.Second); v != clock.Behind { // a straggler, 1 s late
		t.Fatalf("straggler: %v, want Behind", v)
	}
	d.off -= int64(4 * time.Second)
	var v clock.Verdict
	for range 3 {
		v, _ = d.ping(time.Second, 0)
	}
	if v != clock.Stepped || d.m.Shift() != -4*int64(time.Second) {
		t.Fatalf("%v, shift %v; want Stepped, -4s", v, time.Duration(d.m.Shift()))
	}
}

// A fresh ping between disagreeing ones starts the candidate over.
func TestFreshPingResetsTheCandidate(t *testing.T) {
	d := newDevice(0)
	d.learn(t)
	for range 5 {
		d.off = -3 * int64(time.Second)
		if v, _ := d.ping(time.Second, 0); v != clock.Behind {
			t.Fatalf("%v, want Behind", v)
		}
		d.off = 0
		if v, _ := d.ping(time.Second, 0); v != clock.Fresh || d.m.Pending() != 0 {
			t.Fatalf("%v, pending %d; want Fresh, 0", v, d.m.Pending())
		}
	}
	if d.m.Shift() != 0 {
		t.Fatalf("shift %v, want 0", time.Duration(d.m.Shift()))
	}
}

// "Pings 2.5 s late that agree, two or three of them with none after ...
// are a step back: they are told when their batch is placed": TellPending
// confirms two or more agreeing pings of a second or more, nothing less.
func TestTellPending(t *testing.T) {
	for _, tc := range []struct {
		name   string
		behind time.Duration
		pings  int
		told   bool
	}{
		{"one ping 2.5s behind", 2500 * time.Millisecond, 1, false},
		{"two pings 2.5s behind", 2500 * time.Millisecond, 2, true},
		{"two pings 1s behind", time.Second, 2, true},
		{"two pings 900ms behind", 900 * time.Millisecond, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDevice(0)
			d.learn(t)
			if d.m.TellPending() {
				t.Fatal("told a step with no candidate")
			}
			for range tc.pings {
				if v, _ := d.ping(time.Second, tc.behind); v != clock.Behind {
					t.Fatalf("%v, want Behind", v)
				}
			}
			if got := d.m.TellPending(); got != tc.told {
				t.Fatalf("TellPending = %v, want %v", got, tc.told)
			}
			want := int64(0)
			if tc.told {
				want = -int64(tc.behind)
			}
			if d.m.Shift() != want || tc.told && d.m.Pending() != 0 {
				t.Fatalf("shift %v, pending %d; want %v", time.Duration(d.m.Shift()), d.m.Pending(), time.Duration(want))
			}
		})
	}
}

// "For 10 s after a step (on the device's clock), arriving pings are
// assigned [to the generation in which their transit delay is the
// smaller non-negative one]"; "a ping never goes to the old clock where
// it would lie more than a second after what that clock's fresh pings
// had reached".
func TestPreviousGenerationAfterAStep(t *testing.T) {
	d := newDevice(0)
	d.learn(t) // the old clock's pings reached w0+4s
	oldEnd := w0 + 4*int64(time.Second)
	d.off += int64(5 * time.Second)
	for range 3 {
		d.ping(time.Second, 0)
	}
	if d.m.Shift() != 5*int64(time.Second) {
		t.Fatalf("shift %v, want 5s", time.Duration(d.m.Shift()))
	}
	d.m.MarkStep(0, oldEnd)
	if d.m.PrevShift() != 0 {
		t.Fatalf("previous shift %v", time.Duration(d.m.PrevShift()))
	}
	wall := w0 + d.at + int64(500*time.Millisecond)
	// Stamped w0+4s on the old clock, arriving 3.5 s later: its transit
	// delay is 3.5 s on the old clock and 8.5 s on the new one, so it is
	// the old clock's.
	if !d.m.Previous(oldEnd, wall) {
		t.Error("a ping of the old clock stamped at its last fresh ping is not the old clock's")
	}
	// A ping of the new clock, on time, is the new clock's.
	if d.m.Previous(wall+d.m.Shift(), wall) {
		t.Error("an on-time ping of the new clock was taken for the old clock's")
	}
	// More than a second after what the old clock reached: not the old
	// clock's, whatever its delay.
	if d.m.Previous(oldEnd+int64(1100*time.Millisecond), wall) {
		t.Error("a stamp 1.1 s after the old clock's reach was taken for the old clock's")
	}
	// Past the straggler window (10 s on the device's clock): no ping is
	// the old clock's.
	late := oldEnd + int64(10*time.Second) + int64(time.Second)
	if d.m.Previous(oldEnd, late) {
		t.Error("a ping 11 s after the step was taken for the old clock's")
	}
}
