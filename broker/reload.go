package broker

import (
	"crypto/sha256"
	"fmt"
	"os"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
)

// ReloadFences reads the fences file again and swaps it in (SIGHUP).
func (s *Server) ReloadFences() error {
	if s.engine == nil {
		return ErrEngineOff
	}
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	return s.reloadFile()
}

func (s *Server) reloadFile() error {
	data, err := os.ReadFile(s.cfg.Fences)
	if err != nil {
		s.reloadErrors.Inc()
		s.log.Error("fence reload failed: previous fences stay live", "source", s.cfg.Fences, "error", err)
		return fmt.Errorf("reload fences %s: %w", s.cfg.Fences, err)
	}
	s.fencesSum = sha256.Sum256(data)
	return s.applyFences(data, s.cfg.Fences)
}

// ApplyFences parses a GeoJSON fence set and swaps it in atomically. An
// invalid set is rejected whole, logged and counted, and the previous
// fences stay live. Devices inside a removed fence get their EXIT now.
// Reloads are serialised, so sources racing each other apply in turn.
func (s *Server) ApplyFences(geojson []byte, source string) error {
	if s.engine == nil {
		return ErrEngineOff
	}
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	return s.applyFences(geojson, source)
}

func (s *Server) applyFences(geojson []byte, source string) error {
	set, err := fence.Parse(geojson)
	if err != nil {
		s.reloadErrors.Inc()
		s.log.Error("fence reload rejected: previous fences stay live", "source", source, "error", err)
		return fmt.Errorf("fences from %s: %w", source, err)
	}
	old := s.engine.Fences()
	if err := s.engine.SetFences(set); err != nil {
		return err
	}
	s.reloads.Inc()
	s.log.Info("fences reloaded", "source", source, "fences", set.Len(), "before", old.Len())
	return nil
}

// pollFences reloads the fences file when its content changes, checked
// every period (a poll rather than inotify: it works on every filesystem,
// including the bind mounts and SD cards of field boxes).
func (s *Server) pollFences(period time.Duration) {
	defer close(s.pollDone)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-s.pollStop:
			return
		case <-t.C:
			b, err := os.ReadFile(s.cfg.Fences)
			if err != nil {
				continue // a file being replaced may be missing for a moment
			}
			s.reloadMu.Lock()
			if sum := sha256.Sum256(b); sum != s.fencesSum {
				_ = s.reloadFile() // logged and counted
			}
			s.reloadMu.Unlock()
		}
	}
}
