package evaluator

import "github.com/edgefence/edgefence/evaluator/engine"

// transition is what the engine decided for one fence: the type, the
// instant on the device's timeline, and whether it undoes the device's
// previous ping's change there (a reversal). The publishing methods dress
// it with its device, its causing ping and the clock as an
// engine.Transition.
type transition struct {
	fence string
	typ   engine.Type
	at    int64
	rev   bool
}
