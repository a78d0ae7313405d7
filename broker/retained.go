package broker

import (
	"strings"
	"sync"

	"github.com/edgefence/edgefence/ingest"
)

// retainedSet holds the retained transition messages, one per
// <prefix>/<fence>/<device> topic. They are kept here rather than in
// mochi's retained map because mochi copies that whole map, 800 bytes a
// message, once a second (to look for expired messages) under the lock
// that every retained publish must take: 12 ms at 10,000 transitions and
// 52 ms at 30,000 on this project's machine, during which no transition
// was published to anyone, and as much garbage each second. Here the
// publisher is the only writer and a new subscription the only reader.
type retainedSet struct {
	mu sync.RWMutex
	m  map[string]*retainedMsg
}

// retainedMsg is one retained transition. It is never changed once in the
// set: a new transition on its topic replaces it, which lets a delivery
// in progress see that a newer one has been published since.
type retainedMsg struct {
	topic   string
	payload []byte
	created int64 // unix seconds
	expiry  int64 // unix seconds it expires at; 0: never
}

func newRetainedSet() *retainedSet {
	return &retainedSet{m: make(map[string]*retainedMsg)}
}

// put retains payload on topic, or with an empty payload deletes what is
// retained there, as MQTT's empty retained publish does.
func (r *retainedSet) put(topic string, payload []byte, created, expiry int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(payload) == 0 {
		delete(r.m, topic)
		return
	}
	r.m[topic] = &retainedMsg{topic: topic, payload: payload, created: created, expiry: expiry}
}

// get returns the message retained on topic, or nil.
func (r *retainedSet) get(topic string) *retainedMsg {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.m[topic]
}

func (r *retainedSet) len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.m)
}

// match appends to dst the messages on topics that filter matches and that
// have not expired by now.
func (r *retainedSet) match(filter string, now int64, dst []*retainedMsg) []*retainedMsg {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !strings.ContainsAny(filter, "+#") {
		if m := r.m[filter]; m != nil && !m.expired(now) {
			dst = append(dst, m)
		}
		return dst
	}
	// Topics starting with '$' are not matched by a filter starting with
	// a wildcard [MQTT-4.7.2-1] (a transition prefix may start with one).
	wild := filter[0] == '+' || filter[0] == '#'
	for topic, m := range r.m {
		if wild && topic[0] == '$' || m.expired(now) || !ingest.Matches(filter, topic) {
			continue
		}
		dst = append(dst, m)
	}
	return dst
}

// expire deletes the messages that have expired by now and returns their
// topics.
func (r *retainedSet) expire(now int64) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var gone []string
	for topic, m := range r.m {
		if m.expired(now) {
			delete(r.m, topic)
			gone = append(gone, topic)
		}
	}
	return gone
}

// expired reports whether m has expired by now, as mochi has it: its
// expiry second has passed (times are whole seconds, so a message lives
// up to a second longer than its expiry, never shorter).
func (m *retainedMsg) expired(now int64) bool { return m.expiry > 0 && m.expiry < now }
