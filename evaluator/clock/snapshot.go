package clock

// ModelSnapshot is a Model's whole state with exported fields, so that a
// device's clock can be checkpointed and restored exactly (a scale-out
// worker handing a partition over). Field meanings are Model's.
type ModelSnapshot struct {
	Off, Shift           int64
	Cand, LastArr        int64
	PrevShift, StepEnd   int64
	PrevArr              int64
	BurstEvent, BurstArr int64
	GapAt                int64
	Boot                 *BootSnapshot // nil: no counting clock
	Learned              uint8
	CandN                int8
	Passed               uint8
	PrevBoot             bool
	GapUs                int32
}

// BootSnapshot is a counting clock's state (see Model).
type BootSnapshot struct {
	Anchor                int64
	Prov                  bool
	Arr, Step, Last, Prev int64
	Beside, Clock         int64
}

// Snapshot returns the model's state.
func (c *Model) Snapshot() ModelSnapshot {
	s := ModelSnapshot{
		Off: c.off, Shift: c.shift, Cand: c.cand, LastArr: c.lastArr,
		PrevShift: c.prevShift,
		StepEnd:   c.stepEnd, PrevArr: c.prevArr,
		BurstEvent: c.burstEvent, BurstArr: c.burstArr, GapAt: c.gapAt,
		Learned: c.learned, CandN: c.candN, Passed: c.passed, PrevBoot: c.prevBoot, GapUs: c.gapUs,
	}
	if b := c.boot; b != nil {
		s.Boot = &BootSnapshot{Anchor: b.anchor, Prov: b.prov, Arr: b.arr, Step: b.step, Last: b.last, Prev: b.prev, Beside: b.beside, Clock: b.clock}
	}
	return s
}

// RestoreModel returns the model a Snapshot was taken of.
func RestoreModel(s *ModelSnapshot) Model {
	c := Model{
		off: s.Off, shift: s.Shift, cand: s.Cand, lastArr: s.LastArr,
		prevShift: s.PrevShift, stepEnd: s.StepEnd, prevArr: s.PrevArr,
		burstEvent: s.BurstEvent, burstArr: s.BurstArr, gapAt: s.GapAt,
		learned: s.Learned, candN: s.CandN, passed: s.Passed, prevBoot: s.PrevBoot, gapUs: s.GapUs,
	}
	if b := s.Boot; b != nil {
		c.boot = &bootClock{anchor: b.Anchor, prov: b.Prov, arr: b.Arr, step: b.Step, last: b.Last, prev: b.Prev, beside: b.Beside, clock: b.Clock}
	}
	return c
}
