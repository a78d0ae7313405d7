package broker

import (
	"strings"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/owntracks"
)

// owntracksQueue is how many OwnTracks events may wait to be published;
// beyond it they are shed and counted.
const owntracksQueue = 4096

// owntracksHook feeds --owntracks-events: it sees every publish after
// mochi handled it, notes the devices that report OwnTracks locations,
// and queues an OwnTracks event for each of their transitions the
// server publishes. Its own goroutine publishes them: the hook runs in
// the publisher's goroutine, which must not wait on subscribers.
type owntracksHook struct {
	mqtt.HookBase
	ev     *owntracks.Events
	prefix string // the transition prefix, with its slash
	srv    *mqtt.Server
	queue  chan message
	done   chan struct{}
	shed   *metrics.Counter
	sent   *metrics.Counter
}

func (s *Server) startOwnTracks() error {
	h := &owntracksHook{
		ev:     owntracks.New(s.cfg.Telemetry, s.engine.Fences),
		prefix: s.cfg.TransitionPrefix + "/",
		srv:    s.mqtt,
		queue:  make(chan message, owntracksQueue),
		done:   make(chan struct{}),
		shed:   s.set.NewCounter(`edgefence_shed_total{stage="owntracks"}`),
		sent:   s.set.NewCounter(`edgefence_owntracks_events_total`),
	}
	if err := s.mqtt.AddHook(h, nil); err != nil {
		return err
	}
	s.owntracks = h
	go h.run()
	return nil
}

func (h *owntracksHook) ID() string { return "edgefence-owntracks" }

func (h *owntracksHook) Provides(b byte) bool { return b == mqtt.OnPublished }

// OnPublished notes OwnTracks locations and turns the server's
// transitions into OwnTracks events.
func (h *owntracksHook) OnPublished(cl *mqtt.Client, pk packets.Packet) {
	// Inline: no network client can be, whatever id it connects with.
	if cl.Net.Inline && cl.ID == publisherID && strings.HasPrefix(pk.TopicName, h.prefix) {
		if topic, ev, ok := h.ev.Transition(pk.Payload); ok {
			select {
			case h.queue <- message{topic: topic, payload: ev}:
			default:
				h.shed.Inc()
			}
		}
		return
	}
	if !cl.Net.Inline {
		h.ev.Seen(pk.TopicName, pk.Payload)
	}
}

func (h *owntracksHook) run() {
	defer close(h.done)
	for m := range h.queue {
		if err := h.srv.Publish(m.topic, m.payload, false, 1); err == nil {
			h.sent.Inc()
		}
	}
}

// close publishes what is queued and stops; call it once the publisher
// has stopped.
func (h *owntracksHook) close() {
	close(h.queue)
	<-h.done
}
