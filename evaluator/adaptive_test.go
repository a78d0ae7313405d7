package evaluator

import (
	"errors"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/hold"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

func adaptive(c *engine.Config) { c.Hold = engine.AdaptiveHold }

// hold250us is the adaptive hold's resolution.
const hold250us = hold.Unit

// steady sends n pings of dev outside the fences, every period, each
// arriving delay after it was stamped, from event start; it returns the
// next event instant.
func (h *harness) steady(dev string, n int, start, period, delay time.Duration) time.Duration {
	for i := range n {
		ev := start + time.Duration(i)*period
		h.send(dev, outside, ev, ev+delay)
	}
	return start + time.Duration(n)*period
}

// run advances virtual time to until, running each deadline at its own
// instant as a shard's timer does.
func (h *harness) run(until time.Duration) {
	for {
		next, ok := h.proc.NextDeadline()
		if !ok || next.After(t0.Add(until)) {
			break
		}
		h.proc.Advance(next)
	}
	h.at(until)
}

// decidedAfter returns how long after its ping arrived the last
// transition was decided.
func (h *harness) decidedAfter() time.Duration {
	tr := h.rec.trans[len(h.rec.trans)-1]
	return tr.Decided.Sub(tr.Ingest)
}

// With steady delays the adaptive hold converges below the fixed
// default, to the lower bound, and a ping is released exactly that long
// after it arrived.
func TestPropertyAdaptiveHoldConvergesBelowTheFixedDefault(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness(t, adaptive)
		period := ms(rapid.IntRange(200, 2000).Draw(t, "period_ms"))
		delay := ms(rapid.IntRange(0, 300).Draw(t, "delay_ms"))
		ev := h.steady("d", 200, 0, period, delay)
		hold, _ := h.proc.Hold("d")
		if hold != h.cfg.HoldMin || hold >= engine.DefaultHold {
			t.Fatalf("after 200 steady pings: hold %v, want the lower bound %v (below %v)", hold, h.cfg.HoldMin, engine.DefaultHold)
		}
		h.send("d", inDepot, ev, ev+delay)
		h.run(ev + delay + time.Minute)
		if got := h.decidedAfter(); got != hold {
			t.Fatalf("ENTER decided %v after its ping arrived, want the hold %v", got, hold)
		}
	})
}

// A late ping widens its device's hold before the next ping is placed:
// the next ping waits the wider hold, exactly.
func TestPropertyLatePingWidensBeforeTheNextRelease(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newHarness(t, adaptive)
		const period = time.Second
		ev := h.steady("d", 100, 0, period, 20*time.Millisecond)
		// A burst of pings that overtook each other: each arrives late
		// behind the newest.
		late := ms(rapid.IntRange(150, 400).Draw(t, "late_ms"))
		arrive := ev + 30*time.Millisecond
		h.send("d", outside, ev+late, arrive)
		for i := range rapid.IntRange(1, 3).Draw(t, "burst") {
			h.send("d", outside, ev+time.Duration(i)*ms(10), arrive+time.Duration(i+1)*ms(5))
		}
		want := min(max(late-ms(20), h.cfg.HoldMin), h.cfg.HoldMax)
		if hold, _ := h.proc.Hold("d"); hold < want {
			t.Fatalf("after pings %v late: hold %v, want at least %v", late, hold, want)
		}
		// The next ping, on time, narrows it by a step at most and waits
		// exactly the hold its device had when it arrived.
		next := ev + period
		h.send("d", inDepot, next, next+ms(20))
		hold, _ := h.proc.Hold("d")
		h.run(next + time.Minute)
		if got := h.decidedAfter(); got != hold || got < want-want/8-hold250us {
			t.Fatalf("next ping's ENTER decided %v after it arrived, want its hold %v, about %v", got, hold, want)
		}
	})
}

// A new device holds for the widest hold until its clock is learned and
// it has settled; so does one whose clock stepped.
func TestAdaptiveHoldWideWhileNewOrStepped(t *testing.T) {
	h := newHarness(t, adaptive)
	h.send("d", outside, 0, 0)
	if hold, _ := h.proc.Hold("d"); hold != h.cfg.HoldMax {
		t.Fatalf("new device: hold %v, want %v", hold, h.cfg.HoldMax)
	}
	ev := h.steady("d", 50, time.Second, time.Second, 20*time.Millisecond)
	if hold, _ := h.proc.Hold("d"); hold != h.cfg.HoldMin {
		t.Fatalf("settled: hold %v, want %v", hold, h.cfg.HoldMin)
	}
	// The clock jumps 5 s ahead and stays there.
	h.steady("d", 5, ev+5*time.Second, time.Second, -5*time.Second+20*time.Millisecond)
	if h.m.Steps.Get() != 1 {
		t.Fatalf("steps = %d, want 1", h.m.Steps.Get())
	}
	if hold, _ := h.proc.Hold("d"); hold != h.cfg.HoldMax {
		t.Fatalf("just stepped: hold %v, want %v", hold, h.cfg.HoldMax)
	}
}

// The adaptive hold's bounds and the accuracy cap are checked up front.
func TestAdaptiveConfigValidate(t *testing.T) {
	for name, mod := range map[string]func(*engine.Config){
		"zero floor":     func(c *engine.Config) { c.HoldMin = 0 },
		"max below min":  func(c *engine.Config) { c.HoldMax = c.HoldMin / 2 },
		"max over limit": func(c *engine.Config) { c.HoldMax = hold.Limit + time.Millisecond },
		"negative cap":   func(c *engine.Config) { c.MaxAccuracy = -1 },
		"infinite cap":   func(c *engine.Config) { c.MaxAccuracy = math.Inf(1) },
	} {
		c := engine.DefaultConfig()
		c.Hold = engine.AdaptiveHold
		mod(&c)
		if err := c.Validate(); !errors.Is(err, engine.ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
	c := engine.DefaultConfig()
	c.HoldMin = 0 // unused with a fixed hold
	if err := c.Validate(); err != nil {
		t.Errorf("fixed hold with a zero adaptive floor: %v", err)
	}
}

// A device whose pings start arriving behind its clock, two in a row,
// may be stepping back: its hold widens while that is told, though no
// ping came late behind its high-water mark.
func TestAdaptiveHoldWideWhileAStepBackIsTold(t *testing.T) {
	h := newHarness(t, adaptive)
	ev := h.steady("d", 50, 0, time.Second, 20*time.Millisecond)
	if hold, _ := h.proc.Hold("d"); hold != h.cfg.HoldMin {
		t.Fatalf("settled: hold %v, want %v", hold, h.cfg.HoldMin)
	}
	// The clock jumps 700 ms back: two pings 700 ms behind its model, yet
	// each after the one before (so not late behind its high-water mark).
	h.steady("d", 2, ev-700*time.Millisecond, time.Second, 700*time.Millisecond+20*time.Millisecond)
	if hold, _ := h.proc.Hold("d"); hold != h.cfg.HoldMax {
		t.Fatalf("a step back being told: hold %v, want %v", hold, h.cfg.HoldMax)
	}
}
