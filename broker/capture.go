package broker

import (
	"sync/atomic"

	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/sharded"
	"github.com/edgefence/edgefence/ingest"
)

// capturingEngine is the engine as the telemetry hook sees it with
// --capture: every ping the engine accepts is also queued for the capture
// file. Wrapping the engine, not the hook, records exactly the pings that
// were evaluated (not those refused for a full queue), stamped as the
// engine got them.
type capturingEngine struct {
	*sharded.Engine
	w *capture.Writer
	// seq numbers accepted pings in the order Submit returned; concurrent
	// publishers may queue theirs a few places out of that order.
	seq atomic.Uint64
}

// Submit implements ingest.Engine.
func (c *capturingEngine) Submit(p *engine.Ping) error {
	if err := c.Engine.Submit(p); err != nil {
		return err
	}
	r := capture.FromPing(c.seq.Add(1), p)
	c.w.Write(&r) // a full capture queue drops and counts: never the tracker's problem
	return nil
}

// startCapture opens the capture file and returns the engine wrapped to
// feed it.
func (s *Server) startCapture() (ingest.Engine, error) {
	o := capture.DefaultOptions()
	o.MaxBytes, o.Keep = s.cfg.CaptureMaxBytes, s.cfg.CaptureKeep
	o.Written = s.set.NewCounter(`edgefence_captured_total`)
	o.Dropped = s.set.NewCounter(`edgefence_capture_dropped_total`)
	o.Log = s.log.With("component", "capture")
	w, err := capture.Create(s.cfg.Capture, o)
	if err != nil {
		return nil, err // names the capture and the file already
	}
	s.capture = w
	s.log.Info("capturing accepted pings", "path", s.cfg.Capture, "max_bytes", o.MaxBytes, "keep", o.Keep)
	return &capturingEngine{Engine: s.engine, w: w}, nil
}
