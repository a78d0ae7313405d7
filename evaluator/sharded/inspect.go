package sharded

import (
	"time"

	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/evaluator/inspect"
)

// Inspect returns a view of device's state, or false when the engine
// holds none (never seen, or evicted). It runs on the device's shard after
// the pings queued before it, like any per-device work, and does not
// create the device.
func (e *Engine) Inspect(device string) (inspect.DeviceView, bool, error) {
	var v inspect.DeviceView
	var ok bool
	err := e.do(device, func(p *evaluator.Processor) { v, ok = p.Inspect(device, time.Now()) })
	return v, ok, err
}

// fleetStep is how many devices Fleet looks at per turn as a shard's
// owner: like the sweep, it lets the shard's pings in between.
const fleetStep = 1024

// Fleet calls visit with a summary of every device, shard by shard, as the
// owner of each shard: visit must be quick, must not keep the summary and
// must not call the engine. Between steps of fleetStep devices the shard
// is let go, so a device removed or added meanwhile may be missed or,
// rarely, seen twice.
func (e *Engine) Fleet(visit func(*inspect.DeviceSummary)) error {
	for _, s := range e.shards {
		for next := 0; ; {
			err := e.own(s, func(p *evaluator.Processor) { next = p.Summarise(next, fleetStep, time.Now(), visit) })
			if err != nil {
				return err
			}
			if next == 0 {
				break
			}
		}
	}
	return nil
}
