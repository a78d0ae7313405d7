package stats

import (
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
)

// Census is one Processor's count of its devices per clock state and per
// hold, taken a sweep round at a time. The metrics get a round's counts
// only when the round is whole: a shard swept in steps would otherwise
// show the devices of part of it.
type Census struct {
	counting [clock.NumStates]int64 // devices per clock state in this round
	counted  [clock.NumStates]int64 // … as of the last whole round, published
	holds    []uint64               // devices per Metrics.Hold bucket in this round
	holdSum  time.Duration          // … and their holds' sum
}

// Count counts a device of this round whose clock is in state s and
// whose hold is hold.
func (c *Census) Count(m *Metrics, s clock.State, hold time.Duration) {
	if c.holds == nil {
		c.holds = make([]uint64, len(HoldBuckets)+1)
	}
	c.counting[s]++
	c.holds[m.Hold.Bucket(hold)]++
	c.holdSum += hold
}

// Uncount takes back the clock state of a device counted this round that
// is gone; its hold stays counted: the round saw it.
func (c *Census) Uncount(s clock.State) { c.counting[s]-- }

// Restart drops the counts of a round under way, for one that begins.
func (c *Census) Restart() {
	c.counting = [clock.NumStates]int64{}
	clear(c.holds)
	c.holdSum = 0
}

// Publish hands a whole round's counts to m and begins the next round.
func (c *Census) Publish(m *Metrics) {
	for i, n := range c.counting {
		m.AddClockDevices(i, n-c.counted[i])
	}
	c.counted, c.counting = c.counting, [clock.NumStates]int64{}
	m.Hold.AddCounts(c.holds, c.holdSum)
	clear(c.holds)
	c.holdSum = 0
}
