package broker

import (
	"errors"
	"time"

	"github.com/mochi-mqtt/server/v2/hooks/storage"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/output"
)

// restore rebuilds every device's fence state from the stored retained
// transitions, so that a restart repeats no ENTER and a device that left
// while the broker was down gets its EXIT on its next ping. It retains
// them in mochi (the store withholds them from mochi's own loading),
// giving EXIT messages back the expiry the store does not keep and
// deleting those already past it. A message on a transition topic that is
// not a transition is retained as it was, and restores nothing. Only the
// server's own messages are restored: one on a transition topic that a
// client wrote (a forged will from an older version, a hand-edited store)
// would otherwise become engine state; it is deleted, logged and counted.
func (s *Server) restore() (int, error) {
	if s.store == nil {
		return 0, nil
	}
	n := 0
	now := time.Now()
	var gone []message
	var restoreErr error
	err := s.store.Retained(s.cfg.TransitionPrefix+"/", func(m *storage.Message) {
		if restoreErr != nil {
			return
		}
		if m.Client != publisherID && m.Origin != publisherID {
			s.notOurs.Inc()
			s.log.Warn("deleting a stored retained message on a transition topic that the server did not publish", "topic", m.TopicName, "client", m.Client)
			gone = append(gone, message{topic: m.TopicName, retain: true}) // an empty one deletes
			return
		}
		r, err := output.ParseRetained(s.cfg.TransitionPrefix, m.TopicName, m.Payload)
		if err != nil {
			if errors.Is(err, output.ErrUnreadable) {
				s.log.Warn("ignoring unreadable retained transition", "topic", m.TopicName, "error", err)
			} else {
				s.log.Warn("ignoring retained message that is not a transition", "topic", m.TopicName)
			}
			s.mqtt.Topics.RetainMessage(m.ToPacket())
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
	if len(gone) > 0 {
		s.pub.send(gone) // after the scan: it writes the store
	}
	return n, errors.Join(err, restoreErr)
}
