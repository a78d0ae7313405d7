package hold

import (
	"testing"
	"time"
	"unsafe"

	"pgregory.net/rapid"
)

var policy = Policy{Min: 100 * time.Millisecond, Max: 500 * time.Millisecond, Settle: 8}

// fixedDefault is the fixed hold the adaptive one is measured against.
const fixedDefault = 500 * time.Millisecond

// A device whose pings arrive with steady, small delays ends up with a
// hold below the fixed default, whatever it went through before: its
// estimate decays to the lateness it actually shows.
func TestPropertySteadyDelaysConvergeBelowTheFixedDefault(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var e Estimate
		e.Widen(&policy)
		// Any history: late pings up to ten seconds behind.
		for range rapid.IntRange(0, 50).Draw(t, "history") {
			e.Observe(time.Duration(rapid.Int64Range(0, int64(10*time.Second)).Draw(t, "late")), &policy)
		}
		// Then steady: a reordering of at most jitter every few pings.
		jitter := time.Duration(rapid.Int64Range(0, int64(80*time.Millisecond)).Draw(t, "jitter"))
		every := rapid.IntRange(2, 20).Draw(t, "every")
		for i := range 1000 {
			late := time.Duration(0)
			if i%every == 0 {
				late = jitter
			}
			e.Observe(late, &policy)
		}
		if h := e.Hold(&policy); h >= fixedDefault || h < policy.Min || h > max(policy.Min, jitter+Unit) {
			t.Fatalf("steady jitter %v every %d pings: hold %v, want in [%v, max(min, jitter)] and below %v", jitter, every, h, policy.Min, fixedDefault)
		}
	})
}

// A late ping widens the hold at once, to cover its lateness (up to the
// bound), before the next ping is placed; a steady device narrows only
// slowly after it.
func TestPropertyLatePingWidensAtOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var e Estimate
		for range rapid.IntRange(0, 200).Draw(t, "steady") {
			e.Observe(0, &policy)
		}
		before := e.Hold(&policy)
		late := time.Duration(rapid.Int64Range(1, int64(5*time.Second)).Draw(t, "late"))
		e.Observe(late, &policy)
		want := min(max(late, before), policy.Max)
		if h := e.Hold(&policy); h < want {
			t.Fatalf("after a ping %v late: hold %v, want at least %v", late, h, want)
		}
		wide := e.Hold(&policy)
		e.Observe(0, &policy)
		if h := e.Hold(&policy); h < wide-wide/8-Unit {
			t.Fatalf("one on-time ping narrowed the hold from %v to %v: too fast", wide, h)
		}
	})
}

// A device that just started or whose clock stepped holds for the widest
// hold until it has sent Settle on-time pings; late ones do not count.
func TestWidenHoldsAtMaxUntilSettled(t *testing.T) {
	var e Estimate
	e.Widen(&policy)
	for i := range int(policy.Settle) {
		if h := e.Hold(&policy); h != policy.Max {
			t.Fatalf("after %d on-time pings: hold %v, want %v", i, h, policy.Max)
		}
		e.Observe(0, &policy)
		e.Observe(time.Millisecond, &policy) // late: does not settle it
	}
	if h := e.Hold(&policy); h != policy.Min {
		t.Fatalf("settled: hold %v, want %v", h, policy.Min)
	}
}

// The estimate fits the last spare bytes of the device record: three,
// with no alignment.
func TestEstimateIsThreeUnalignedBytes(t *testing.T) {
	if n, a := unsafe.Sizeof(Estimate{}), unsafe.Alignof(Estimate{}); n != 3 || a != 1 {
		t.Fatalf("Estimate is %d bytes aligned to %d, want 3 aligned to 1", n, a)
	}
}
