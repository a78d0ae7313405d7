package broker

import (
	"errors"
	"strings"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/evaluator"
	"github.com/edgefence/edgefence/output"
)

// restore rebuilds every device's fence state from the retained transition
// topics, which mochi has just loaded from the store, so that a restart
// repeats no ENTER and a device that left while the broker was down gets
// its EXIT on its next ping. It moves them from mochi's retained map into
// the retained set (see retainedSet), and gives EXIT messages back the
// expiry the store does not keep, deleting those already past it.
func (s *Server) restore() (int, error) {
	prefix := s.cfg.TransitionPrefix + "/"
	n := 0
	now := time.Now()
	for topic, pk := range s.mqtt.Topics.Retained.GetAll() {
		if !strings.HasPrefix(topic, prefix) {
			continue
		}
		r, err := output.ParseRetained(s.cfg.TransitionPrefix, topic, pk.Payload)
		if err != nil {
			if errors.Is(err, output.ErrUnreadable) {
				s.log.Warn("ignoring unreadable retained transition", "topic", topic, "error", err)
			} else {
				s.log.Warn("ignoring retained message that is not a transition", "topic", topic)
			}
			continue
		}
		s.mqtt.Topics.RetainMessage(packets.Packet{TopicName: topic}) // an empty one deletes
		var expiry int64
		if r.Type == evaluator.Exit {
			expires := r.Decided.Add(s.cfg.ExitExpiry)
			if r.Decided.IsZero() || !expires.After(now) {
				// An empty retained publish deletes it from the store.
				s.pub.send([]message{{topic: topic, retain: true}})
				continue
			}
			expiry = expires.Unix()
		}
		created := pk.Created
		if !r.Decided.IsZero() {
			created = r.Decided.Unix()
		}
		s.retained.put(topic, pk.Payload, created, expiry)
		if err := s.engine.Restore(r.Device, r.Fence, r.Type, r.Event); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
