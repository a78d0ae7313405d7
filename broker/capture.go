package broker

import (
	"sync/atomic"

	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/ingest"
)

// startCapture opens the capture file and taps r to feed it every ping
// the engine accepts. Tapping the reader after Submit, not the hook,
// records exactly the pings that were evaluated (not those refused for a
// full queue), stamped as the engine got them.
func (s *Server) startCapture(r *ingest.Reader) error {
	o := capture.DefaultOptions()
	o.MaxBytes, o.Keep = s.cfg.CaptureMaxBytes, s.cfg.CaptureKeep
	o.Written = s.set.NewCounter(`edgefence_captured_total`)
	o.Dropped = s.set.NewCounter(`edgefence_capture_dropped_total`)
	o.Log = s.log.With("component", "capture")
	w, err := capture.Create(s.cfg.Capture, o)
	if err != nil {
		return err // names the capture and the file already
	}
	s.capture = w
	s.log.Info("capturing accepted pings", "path", s.cfg.Capture, "max_bytes", o.MaxBytes, "keep", o.Keep)
	// seq numbers accepted pings in the order Submit returned; concurrent
	// publishers may queue theirs a few places out of that order.
	var seq atomic.Uint64
	r.Tap(func(p engine.Ping) {
		rec := capture.FromPing(seq.Add(1), &p)
		w.Write(&rec) // a full capture queue drops and counts: never the tracker's problem
	})
	return nil
}
