package broker

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mochi-mqtt/server/v2/hooks/storage"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/output"
	"github.com/edgefence/edgefence/store"
)

// restore rebuilds every device's fence state from the stored retained
// transitions, so that a restart repeats no ENTER and a device that left
// while the broker was down gets its EXIT on its next ping. It retains
// them in mochi (the store withholds them from mochi's own loading),
// giving EXIT messages back the expiry the store does not keep and
// deleting those already past it. Only the server's own messages, by the
// store's mark (store.IsServer: no client can write it, whatever id it
// connects with), are restored: a client's on a transition topic (a
// forged will from an older version, a hand-edited store) is deleted,
// logged and counted. One of the server's own that its engine cannot have
// decided (output.CheckRetained: nonsense stamps, not a transition) makes
// the start fail, naming it and the repair, with the file unchanged.
func (s *Server) restore() (int, error) {
	if s.store == nil {
		return 0, nil
	}
	n := 0
	now := time.Now()
	clamp := s.cfg.Engine.Clamper()
	var gone []message
	var implausible []string
	var restoreErr error
	err := s.store.Retained(s.cfg.TransitionPrefix+"/", func(m *storage.Message) {
		if restoreErr != nil {
			return
		}
		if !store.IsServer(m) {
			s.notOurs.Inc()
			s.log.Warn("deleting a stored retained message on a transition topic that the server did not publish", "topic", m.TopicName, "client", m.Client)
			gone = append(gone, message{topic: m.TopicName, retain: true}) // an empty one deletes
			return
		}
		r, err := output.CheckRetained(s.cfg.TransitionPrefix, m.TopicName, m.Payload, clamp, now)
		if err != nil {
			implausible = append(implausible, err.Error())
			return
		}
		var expiry int64
		if r.Type == engine.Exit {
			expires := r.Decided.Add(s.cfg.ExitExpiry)
			if r.Decided.IsZero() || !expires.After(now) {
				gone = append(gone, message{topic: m.TopicName, retain: true}) // an empty one deletes
				return
			}
			expiry = expires.Unix()
		}
		pk := m.ToPacket()
		if !r.Decided.IsZero() {
			pk.Created = r.Decided.Unix()
		}
		pk.Expiry, pk.ProtocolVersion = expiry, 5 // mochi expires MQTT 5 messages only
		s.mqtt.Topics.RetainMessage(pk)
		if restoreErr = s.engine.Restore(r.Device, r.Fence, r.Type, r.Event); restoreErr == nil {
			n++
		}
	})
	if len(implausible) > 0 {
		dir := s.cfg.DataDir
		return 0, fmt.Errorf("%w: %s: %d stored transitions the engine cannot have decided: %s; no record was changed. "+
			"With the broker stopped, `edgefence store check --data-dir %s` lists them and `edgefence store repair --data-dir %s` "+
			"sets them aside: their devices' state in those fences is then decided afresh by their next pings (docs/runbook.md)",
			store.ErrDamaged, filepath.Join(dir, store.File), len(implausible), strings.Join(implausible[:min(3, len(implausible))], "; "), dir, dir)
	}
	if len(gone) > 0 {
		s.pub.send(gone) // after the scan: it writes the store
	}
	return n, errors.Join(err, restoreErr)
}
