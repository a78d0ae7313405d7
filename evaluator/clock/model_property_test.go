package clock_test

import (
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/edgefence/edgefence/evaluator/clock"
)

// "A device that never steps is ordered by its own stamps as sent", and
// its offset is learned with the minimum-delay filter: whatever its
// offset and its pings' delays within the hold, every ping is fresh, no
// step is found, and the offset is the offset less the smallest delay.
func TestPropertyDeviceThatNeverStepsKeepsItsStamps(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		off := time.Duration(rapid.Int64Range(-int64(5*time.Minute), int64(5*time.Minute)).Draw(t, "offset"))
		d := newDevice(off)
		minDelay := time.Duration(1<<63 - 1)
		for i := range rapid.IntRange(1, 60).Draw(t, "pings") {
			gap := time.Duration(rapid.Int64Range(int64(time.Millisecond), int64(30*time.Second)).Draw(t, "gap"))
			delay := time.Duration(rapid.Int64Range(0, behindTol-1).Draw(t, "delay"))
			minDelay = min(minDelay, delay)
			v, y := d.ping(gap, delay)
			if v != clock.Fresh {
				t.Fatalf("ping %d (delay %v): %v, want Fresh", i, delay, v)
			}
			if d.m.Shift() != 0 || y != int64(off-delay) {
				t.Fatalf("ping %d: shift %v, timeline − arrival %v; want 0, %v (its stamp as sent)", i, time.Duration(d.m.Shift()), time.Duration(y), off-delay)
			}
			if got := time.Duration(d.m.Off()); got != off-minDelay {
				t.Fatalf("ping %d: offset %v, want %v (the offset less the smallest delay)", i, got, off-minDelay)
			}
		}
	})
}

// Whatever the offset and however far a clock steps (a second or more
// back, beyond the skew tolerance forward), three pings of the new clock
// that arrive a second or more apart confirm it; the shift is the step
// within the spread of the delays, and the new clock's pings are fresh
// from then on.
func TestPropertyStepConfirmedAndTimelineContinuous(t *testing.T) {
	const spread = 100 * time.Millisecond
	rapid.Check(t, func(t *rapid.T) {
		var off, step time.Duration
		first := clock.Behind
		if rapid.Bool().Draw(t, "forward") {
			// Ahead of the server too, or the offset absorbs it (a
			// backlog's stamps rise toward the server's clock).
			off = time.Duration(rapid.Int64Range(0, int64(5*time.Minute)).Draw(t, "offset"))
			step = time.Duration(rapid.Int64Range(int64(2200*time.Millisecond), int64(5*time.Minute)).Draw(t, "step"))
			first = clock.Ahead
		} else {
			off = time.Duration(rapid.Int64Range(-int64(5*time.Minute), int64(5*time.Minute)).Draw(t, "offset"))
			step = -time.Duration(rapid.Int64Range(int64(1200*time.Millisecond), int64(5*time.Minute)).Draw(t, "back"))
		}
		d := newDevice(off)
		delay := func() time.Duration { return time.Duration(rapid.Int64Range(0, int64(spread)).Draw(t, "delay")) }
		gap := func() time.Duration {
			return time.Duration(rapid.Int64Range(int64(time.Second), int64(time.Minute)).Draw(t, "gap"))
		}
		for range rapid.IntRange(clock.LearnPings, 20).Draw(t, "before") {
			if v, _ := d.ping(gap(), delay()); v != clock.Fresh {
				t.Fatalf("before the step: %v", v)
			}
		}
		d.off += int64(step)
		for i := range 3 {
			v, _ := d.ping(gap(), delay())
			want := first
			if i == 2 {
				want = clock.Stepped
			}
			if v != want {
				t.Fatalf("ping %d of the new clock: %v, want %v", i+1, v, want)
			}
		}
		if diff := time.Duration(d.m.Shift()) - step; diff < -spread || diff > spread {
			t.Fatalf("shift %v for a step of %v", time.Duration(d.m.Shift()), step)
		}
		shift := d.m.Shift()
		for i := range rapid.IntRange(1, 20).Draw(t, "after") {
			if v, y := d.ping(gap(), delay()); v != clock.Fresh || d.m.Shift() != shift || y > d.m.Off() || d.m.Off()-y > int64(behindTol) {
				t.Fatalf("ping %d after the step: %v, shift %v (was %v), %v behind the model",
					i+1, v, time.Duration(d.m.Shift()), time.Duration(shift), time.Duration(d.m.Off()-y))
			}
		}
	})
}

// A snapshot restores a model exactly: restored mid-way through any
// sequence of pings, steps, cold boots and checks, it answers every
// later call as the model it was taken of does, and its own snapshot is
// the one it was restored from.
func TestPropertySnapshotRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := clock.New()
		var b *clock.Model
		wall := w0
		ops := rapid.IntRange(1, 120).Draw(t, "ops")
		cut := rapid.IntRange(0, ops).Draw(t, "cut")
		for i := range ops {
			if i == cut {
				s := a.Snapshot()
				r := clock.RestoreModel(&s)
				b = &r
				if got := b.Snapshot(); !reflect.DeepEqual(got, s) {
					t.Fatalf("restored model's snapshot\n %+v\nwant\n %+v", got, s)
				}
			}
			wall += rapid.Int64Range(0, int64(3*time.Second)).Draw(t, "gap")
			arr := wall - w0
			var stamp int64
			switch kind := rapid.IntRange(0, 5).Draw(t, "stamp"); {
			case kind == 0: // about on time
				stamp = wall + rapid.Int64Range(-int64(time.Second), int64(time.Second)).Draw(t, "y")
			case kind <= 3: // stepped or delayed, by one of a few amounts: pings agree
				y := rapid.SampledFrom(offsets).Draw(t, "y")
				stamp = wall + y - rapid.Int64Range(0, int64(200*time.Millisecond)).Draw(t, "jitter")
			case kind == 4: // a backlog
				stamp = wall - rapid.Int64Range(0, int64(20*time.Minute)).Draw(t, "age")
			default: // a counting clock
				stamp = rapid.Int64Range(0, int64(time.Hour)).Draw(t, "count")
			}
			op := rapid.IntRange(0, 4).Draw(t, "op")
			call := func(m *clock.Model) []int64 {
				var out []int64
				switch op {
				case 0, 1:
					out = append(out, int64(m.Judge(stamp, wall, arr, skew, behindTol, maxOff, stamp-m.Shift())))
					delta, ok := m.Reanchor(stamp-m.Shift(), wall, arr)
					out = append(out, delta, b2i(ok))
				case 2:
					out = append(out, m.BootTimeline(stamp, wall, arr, skew))
				case 3:
					out = append(out, b2i(m.TellPending()))
				case 4:
					m.MarkStep(m.Shift()-int64(time.Second), stamp)
				}
				return append(out, m.Off(), m.Shift(), m.PrevShift(), int64(m.Pending()), int64(m.State()), m.PrevArrival(),
					b2i(m.Previous(stamp, wall)), b2i(m.Straddles(stamp, wall)), b2i(m.Late(stamp-m.Shift(), wall)),
					b2i(m.Newer(stamp-m.Shift(), wall, int64(time.Second))))
			}
			want := call(&a)
			if b != nil {
				if got := call(b); !reflect.DeepEqual(got, want) {
					t.Fatalf("op %d (%d) after the restore: %v, the original %v", i, op, got, want)
				}
			}
		}
		if b != nil && !reflect.DeepEqual(b.Snapshot(), a.Snapshot()) {
			t.Fatalf("at the end:\n restored %+v\n original %+v", b.Snapshot(), a.Snapshot())
		}
	})
}

// offsets are the clock offsets the snapshot property's stepped or
// delayed pings have: few, so that they agree and pass over each other.
var offsets = []int64{-int64(30 * time.Second), -int64(5 * time.Second), -int64(2500 * time.Millisecond), -int64(time.Second), int64(3 * time.Second), int64(10 * time.Second)}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// A model in the middle of everything (a step absorbed, a step found and marked, a step
// candidate that has passed over a more delayed ping, a counting clock
// anchored in a burst) restores exactly: every snapshot field is set
// here, so a field Snapshot or RestoreModel dropped would show.
func TestSnapshotRestoresAModelInTheMiddleOfEverything(t *testing.T) {
	d := newDevice(time.Second)
	d.learn(t)
	d.off += int64(1500 * time.Millisecond) // a step the offset absorbs: a gap in the timeline
	d.ping(time.Second, 0)
	for i := range 2 { // two steps forward, each marked
		shift := d.m.Shift()
		d.off += int64(5 * time.Second)
		for range 3 {
			d.ping(time.Second, 0)
		}
		d.m.MarkStep(shift, w0+d.at-int64(time.Duration(3-i)*time.Second))
	}
	d.off -= int64(2 * time.Second)
	d.ping(time.Second, 0)
	d.ping(time.Second, 0)             // two agree on a step back …
	d.ping(time.Second, 2*time.Second) // … and pass over a more delayed one
	at := time.Duration(d.at) + 3*time.Second
	d.bootPing(time.Minute, at)                              // a cold boot's count …
	d.bootPing(time.Minute+time.Second, at+time.Millisecond) // … back to back: a burst
	s := d.m.Snapshot()
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("the scripted model leaves %s zero: script a state that sets it", v.Type().Field(i).Name)
		}
	}
	bv := reflect.ValueOf(*s.Boot)
	for i := range bv.NumField() {
		if bv.Field(i).IsZero() && bv.Type().Field(i).Name != "Prov" && bv.Type().Field(i).Name != "Beside" && bv.Type().Field(i).Name != "Clock" {
			t.Errorf("the scripted counting clock leaves %s zero", bv.Type().Field(i).Name)
		}
	}
	r := clock.RestoreModel(&s)
	if got := r.Snapshot(); !reflect.DeepEqual(got, s) {
		t.Fatalf("restored:\n %+v\nwant\n %+v", got, s)
	}
	// The two go on alike, and share nothing.
	e := *d
	e.m = r
	for i := range 10 {
		delay := time.Duration(i%3) * time.Second
		va, ya := d.ping(time.Second, delay)
		vb, yb := e.ping(time.Second, delay)
		if va != vb || ya != yb || !reflect.DeepEqual(d.m.Snapshot(), e.m.Snapshot()) {
			t.Fatalf("ping %d: original %v %v, restored %v %v", i, va, ya, vb, yb)
		}
	}
}
