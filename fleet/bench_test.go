package fleet

import (
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/shadow"
)

// BenchmarkRun is the simulator's own speed: devices × minutes of the
// default fault model under the four default strategies, per op.
func BenchmarkRun(b *testing.B) {
	cfg := DefaultConfig()
	cfg.Devices = 1000
	cfg.Duration = 5 * time.Minute
	set, err := cfg.Fences(300)
	if err != nil {
		b.Fatal(err)
	}
	strategies := shadow.Strategies([]time.Duration{0, 200 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second})
	var pings int64
	for b.Loop() {
		res, err := Run(cfg, engine.DefaultConfig(), set, strategies, 1, nil)
		if err != nil {
			b.Fatal(err)
		}
		pings += res.Pings
	}
	b.ReportMetric(float64(pings)/b.Elapsed().Seconds(), "stream-pings/s")
}
