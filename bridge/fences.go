package bridge

import (
	"crypto/sha256"
	"fmt"
	"os"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
)

// ReloadFences reads the fence file again and swaps it in (SIGHUP), as
// serve does: an invalid file is rejected whole, logged and counted, and
// the previous fences stay live; devices inside a removed fence get their
// EXIT now.
func (b *Bridge) ReloadFences() error {
	b.reloadMu.Lock()
	defer b.reloadMu.Unlock()
	data, err := os.ReadFile(b.cfg.Fences)
	if err != nil {
		b.m.reloadErrors.Inc()
		b.log.Error("fence reload failed: previous fences stay live", "source", b.cfg.Fences, "error", err)
		return fmt.Errorf("reload fences %s: %w", b.cfg.Fences, err)
	}
	b.fencesSum = sha256.Sum256(data)
	set, err := fence.Parse(data)
	if err != nil {
		b.m.reloadErrors.Inc()
		b.log.Error("fence reload rejected: previous fences stay live", "source", b.cfg.Fences, "error", err)
		return fmt.Errorf("fences from %s: %w", b.cfg.Fences, err)
	}
	old := b.engine.Fences()
	if err := b.engine.SetFences(set); err != nil {
		return err
	}
	b.m.reloads.Inc()
	b.log.Info("fences reloaded", "source", b.cfg.Fences, "fences", set.Len(), "before", old.Len())
	return nil
}

// pollFences reloads the fence file when its content changes, checked
// every period, until stop is closed.
func (b *Bridge) pollFences(period time.Duration, stop <-chan struct{}) {
	defer close(b.pollDone)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			data, err := os.ReadFile(b.cfg.Fences)
			if err != nil {
				continue // a file being replaced may be missing for a moment
			}
			b.reloadMu.Lock()
			changed := sha256.Sum256(data) != b.fencesSum
			b.reloadMu.Unlock()
			if changed {
				_ = b.ReloadFences() // logged and counted
			}
		}
	}
}
