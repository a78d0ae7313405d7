package broker

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/edgefence/edgefence/evaluator"
)

// restored is what a restart needs from a retained transition.
type restored struct {
	Device      string    `json:"device"`
	Fence       string    `json:"fence"`
	Type        string    `json:"type"`
	Ts          int64     `json:"ts"`
	DecidedTime time.Time `json:"decided_time"`
}

// restore rebuilds every device's fence state from the retained transition
// topics, which mochi has just loaded from the store, so that a restart
// repeats no ENTER and a device that left while the broker was down gets
// its EXIT on its next ping. It also gives EXIT messages back the expiry
// the store does not keep, deleting those already past it.
func (s *Server) restore() (int, error) {
	prefix := s.cfg.TransitionPrefix + "/"
	n := 0
	now := time.Now()
	for topic, pk := range s.mqtt.Topics.Retained.GetAll() {
		if !strings.HasPrefix(topic, prefix) {
			continue
		}
		var r restored
		if err := json.Unmarshal(pk.Payload, &r); err != nil {
			s.log.Warn("ignoring unreadable retained transition", "topic", topic, "error", err)
			continue
		}
		typ, ok := evaluator.ParseType(r.Type)
		fenceID, device, _ := strings.Cut(strings.TrimPrefix(topic, prefix), "/")
		if !ok || fenceID != r.Fence || device != r.Device {
			s.log.Warn("ignoring retained message that is not a transition", "topic", topic)
			continue
		}
		if typ == evaluator.Exit {
			expires := r.DecidedTime.Add(s.cfg.ExitExpiry)
			if r.DecidedTime.IsZero() || !expires.After(now) {
				// An empty retained publish deletes it from memory and store.
				s.pub.publish(message{topic: topic, retain: true})
				continue
			}
			pk.Created = r.DecidedTime.Unix()
			pk.Expiry = expires.Unix()
			pk.ProtocolVersion = 5
			pk.Properties.MessageExpiryInterval = uint32(time.Until(expires) / time.Second)
			s.mqtt.Topics.RetainMessage(pk.Copy(false))
		}
		if err := s.engine.Restore(device, fenceID, typ, r.Ts*1e6); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
