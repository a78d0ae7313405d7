// Package gctune keeps a floor under the heap growth the Go garbage
// collector allows between cycles.
//
// With GOGC=100 a cycle starts once the heap has grown by as much as the
// collector last scanned (live heap, goroutine stacks, globals). A broker
// with a small live heap therefore collects often — every second at
// 20,000 pings/s over 1,000 connections, 50 MB live — and each cycle on a
// single core holds transitions up for its mark phase (tens of
// milliseconds at p99). Raising GOGC for small heaps only, so that a cycle
// waits for at least a fixed headroom of growth, spaces the cycles out at
// a bounded memory cost, and leaves large heaps (10,000 connections, whose
// stacks alone give GOGC=100 hundreds of megabytes of headroom) as they
// are.
package gctune

import (
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// MaxPercent bounds the GOGC the tuner sets: between two adjustments the
// live heap may grow, and the next goal grows with it by this factor.
const MaxPercent = 400

// Percent is the GOGC that lets the heap grow by at least headroom bytes
// beyond what the collector scans (live heap, stacks, globals), between
// 100 (Go's default) and MaxPercent.
func Percent(live, stacks, globals, headroom uint64) int {
	scanned := live + stacks + globals
	if scanned == 0 {
		return MaxPercent
	}
	p := (100*headroom + scanned - 1) / scanned
	return int(min(max(p, 100), MaxPercent))
}

// Tuner adjusts GOGC from a goroutine of its own.
type Tuner struct {
	headroom uint64
	samples  []metrics.Sample // live heap, scanned stacks, globals
	stop     chan struct{}
	done     chan struct{}
	initial  int
	percent  atomic.Int64 // the GOGC set last
}

// Start adjusts GOGC every interval (and once at once) so that each cycle
// waits for headroom bytes of heap growth at least. Stop it to restore
// the GOGC it found.
func Start(headroom uint64, every time.Duration) *Tuner {
	t := &Tuner{
		headroom: headroom,
		samples:  []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"}},
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	t.initial = debug.SetGCPercent(100)
	debug.SetGCPercent(t.initial)
	t.adjust()
	go t.run(every)
	return t
}

func (t *Tuner) run(every time.Duration) {
	defer close(t.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			t.adjust()
		case <-t.stop:
			return
		}
	}
}

func (t *Tuner) adjust() {
	metrics.Read(t.samples)
	var v [3]uint64
	for i, s := range t.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	p, cur := Percent(v[0], v[1], v[2], t.headroom), int(t.percent.Load())
	// The live heap wobbles from one second to the next: a change of a
	// few percent is not worth setting, the bounds always are.
	if p == cur || (p != 100 && p != MaxPercent && p > cur-5 && p < cur+5) {
		return
	}
	debug.SetGCPercent(p)
	t.percent.Store(int64(p))
}

// Percent is the GOGC the tuner set last.
func (t *Tuner) Percent() int { return int(t.percent.Load()) }

// Stop stops adjusting and restores the GOGC found at Start.
func (t *Tuner) Stop() {
	close(t.stop)
	<-t.done
	debug.SetGCPercent(t.initial)
}
