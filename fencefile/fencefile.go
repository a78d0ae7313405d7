// Package fencefile loads the fence set from a GeoJSON file and keeps an
// engine in step with it: reload on request or when the file changes, and
// sets applied from elsewhere (the admin topic).
package fencefile

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/sharded"
)

// ErrEngineOff is returned by reloads of a fence file that no engine is
// attached to (a broker started with --engine=off).
var ErrEngineOff = errors.New("the engine is off (--engine=off): no fences to reload")

// FenceFile keeps an engine's fences in step with a GeoJSON file (reload
// on SIGHUP, or when a poll sees its content change) and with sets from
// elsewhere (the admin topic). Reloads are serialised; an invalid set is
// rejected whole, logged and counted, and the previous fences stay live;
// devices inside a removed fence get their EXIT at once. serve and bridge
// both use it.
type FenceFile struct {
	path   string
	log    *slog.Logger
	engine *sharded.Engine // nil until Attach: reloads get ErrEngineOff
	ok     *metrics.Counter
	failed *metrics.Counter

	mu  sync.Mutex // serialises reloads; guards sum
	sum [sha256.Size]byte

	stop, done chan struct{} // the poll's, when it runs
}

// Open reads and parses the fences at path: the set to start an
// engine with.
func Open(path string, log *slog.Logger) (*FenceFile, *fence.Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("load fences: %w", err)
	}
	set, err := fence.Parse(data)
	if err != nil {
		return nil, nil, fmt.Errorf("load fences %s: %w", path, err)
	}
	warn(log, set, path)
	return &FenceFile{path: path, log: log, sum: sha256.Sum256(data)}, set, nil
}

// warn logs what about set, loaded from source, is likely a mistake: no
// fences at all, or a fence whose polygon crosses itself.
func warn(log *slog.Logger, set *fence.Set, source string) {
	if set.Len() == 0 {
		log.Warn("the fence file has no fences: no device will enter or leave any", "source", source)
	}
	for _, w := range set.Warnings() {
		log.Warn("fence may not cover what was drawn", "source", source, "fence", w.ID, "problem", w.Problem)
	}
}

// Attach makes e the engine reloads go to and registers the reload
// counters (edgefence_fence_reloads_total) in set.
func (f *FenceFile) Attach(e *sharded.Engine, set *metrics.Set) {
	f.engine = e
	f.ok = set.NewCounter(`edgefence_fence_reloads_total{result="ok"}`)
	f.failed = set.NewCounter(`edgefence_fence_reloads_total{result="error"}`)
}

// Reload reads the file again and swaps it in.
func (f *FenceFile) Reload() error {
	if f.engine == nil {
		return ErrEngineOff
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reload()
}

func (f *FenceFile) reload() error {
	data, err := os.ReadFile(f.path)
	if err != nil {
		f.failed.Inc()
		f.log.Error("fence reload failed: previous fences stay live", "source", f.path, "error", err)
		return fmt.Errorf("reload fences %s: %w", f.path, err)
	}
	f.sum = sha256.Sum256(data)
	return f.apply(data, f.path)
}

// Apply parses a GeoJSON fence set from source and swaps it in.
func (f *FenceFile) Apply(geojson []byte, source string) error {
	if f.engine == nil {
		return ErrEngineOff
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.apply(geojson, source)
}

func (f *FenceFile) apply(geojson []byte, source string) error {
	set, err := fence.Parse(geojson)
	if err != nil {
		f.failed.Inc()
		f.log.Error("fence reload rejected: previous fences stay live", "source", source, "error", err)
		return fmt.Errorf("fences from %s: %w", source, err)
	}
	warn(f.log, set, source)
	old := f.engine.Fences()
	if err := f.engine.SetFences(set); err != nil {
		return err
	}
	f.ok.Inc()
	f.log.Info("fences reloaded", "source", source, "fences", set.Len(), "before", old.Len())
	return nil
}

// Poll reloads the file whenever its content changes, checked every
// period (a poll rather than inotify: it works on every filesystem,
// including the bind mounts and SD cards of field boxes), until Close.
// Call it once, after Attach.
func (f *FenceFile) Poll(period time.Duration) {
	f.stop, f.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(f.done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-f.stop:
				return
			case <-t.C:
				data, err := os.ReadFile(f.path)
				if err != nil {
					continue // a file being replaced may be missing for a moment
				}
				f.mu.Lock()
				if sha256.Sum256(data) != f.sum {
					_ = f.reload() // logged and counted
				}
				f.mu.Unlock()
			}
		}
	}()
}

// Close stops the poll, if it runs.
func (f *FenceFile) Close() {
	if f.stop != nil {
		close(f.stop)
		<-f.done
		f.stop = nil
	}
}
