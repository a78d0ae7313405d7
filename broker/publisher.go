package broker

import (
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/evaluator/stats"
	"github.com/edgefence/edgefence/hooks"
	"github.com/edgefence/edgefence/output"
	"github.com/edgefence/edgefence/store"
)

// message is one publish the server makes itself.
type message struct {
	topic   string
	payload []byte
	retain  bool
	expiry  uint32    // MQTT 5 message expiry interval in seconds; 0 none
	ingest  time.Time // for a transition: the causing ping's ingest instant
}

// publisher turns engine output and rejects into MQTT publishes. The
// engine's shard goroutines hand transitions over a bounded channel to
// one goroutine that injects them into mochi: retaining a message writes
// the store, and a shard must not wait on a disk. A single goroutine keeps
// every device's transitions in the order the engine decided them.
type publisher struct {
	srv    *mqtt.Server
	cl     *mqtt.Client // our inline client, speaking MQTT 5 for expiry
	store  *store.Store // nil: retained state in memory only
	cfg    *Config
	log    *slog.Logger
	queue  chan message
	writes []store.Write // send's, reused
	gap    *time.Timer   // waits out commitGap
	commit time.Time     // when the last store commit started
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once

	// Messages published since the publisher last waited for the queue
	// or yielded; it yields every yieldEvery: a quarter of a subscriber's
	// queue, so that a writer that misses its turn (the scheduler gives no
	// promise) has three more before its queue overflows.
	streak, yieldEvery int

	publishLatency *stats.Histogram
	dropped        *metrics.Counter
	failed         *metrics.Counter
}

// publisherID is the client id of the publisher's inline client.
const publisherID = hooks.EngineClientID

// batchMax bounds how many queued messages the publisher persists in one
// store commit before it publishes them: a quarter of the queue, so that
// a commit that waits long on a busy disk holds up the engine only when
// it takes longer than the engine needs to decide that many transitions.
const batchMax = publishQueue / 4

// commitGap is the least time from the start of one store commit to the
// start of the next. Under load the transitions decided meanwhile wait
// for it and share the next commit: its cost is mostly the pages it
// rewrites and its fdatasyncs, not the transitions it holds
// (docs/persistence.md). The first transition after a quiet spell is
// committed at once.
const commitGap = 20 * time.Millisecond

// publishQueue is how many messages may wait for the publisher: a few
// seconds of transitions at full load, so that a shard's owner waits on a
// full queue (and its shard refuses pings meanwhile) only when the broker
// cannot publish as fast as it decides, not when the publisher's goroutine
// waits a while for its turn on a busy core.
const publishQueue = 16384

func newPublisher(srv *mqtt.Server, st *store.Store, cfg *Config, set *metrics.Set, log *slog.Logger) *publisher {
	cl := srv.NewClient(nil, mqtt.LocalListener, publisherID, true)
	cl.Properties.ProtocolVersion = 5
	p := &publisher{
		srv:            srv,
		cl:             cl,
		store:          st,
		cfg:            cfg,
		log:            log,
		yieldEvery:     max(1, int(cfg.ClientQueueFor())/4),
		queue:          make(chan message, publishQueue),
		stop:           make(chan struct{}),
		done:           make(chan struct{}),
		publishLatency: stats.NewHistogram(set, `edgefence_publish_latency_seconds`, stats.LatencyBuckets),
		dropped:        set.NewCounter(`edgefence_shed_total{stage="side_output"}`),
		failed:         set.NewCounter(`edgefence_publish_errors_total`),
	}
	go p.run()
	return p
}

func (p *publisher) run() {
	defer close(p.done)
	batch := make([]message, 0, batchMax)
	for {
		select {
		case m := <-p.queue:
			p.awaitCommit()
			b := p.take(append(batch[:0], m))
			p.send(b)
			if len(b) < batchMax {
				p.streak = 0 // drained: the publisher waits next, and the writers run
			}
		case <-p.stop:
			for b := p.take(batch[:0]); len(b) > 0; b = p.take(batch[:0]) {
				p.send(b)
			}
			return
		}
	}
}

// awaitCommit waits, with a store, until commitGap has passed since the
// last commit started (or the publisher is stopped), while the queue fills.
func (p *publisher) awaitCommit() {
	if p.store == nil {
		return
	}
	wait := commitGap - time.Since(p.commit)
	if wait <= 0 {
		return
	}
	if p.gap == nil {
		p.gap = time.NewTimer(wait)
	} else {
		p.gap.Reset(wait)
	}
	select {
	case <-p.gap.C:
	case <-p.stop:
		p.gap.Stop()
	}
}

// take appends what is queued to batch, up to batchMax, without waiting.
func (p *publisher) take(batch []message) []message {
	for len(batch) < batchMax {
		select {
		case m := <-p.queue:
			batch = append(batch, m)
		default:
			return batch
		}
	}
	return batch
}

// send persists the batch's retained messages in one store transaction
// and then publishes them: a transition a subscriber has seen is on disk,
// and the disk sees one commit per batch rather than per message.
// mochi retains what it is given with the RETAIN flag (see publish).
func (p *publisher) send(batch []message) {
	now := time.Now().Unix()
	if p.store != nil {
		ws := p.writes[:0]
		for i := range batch {
			if batch[i].retain {
				pk := p.packet(&batch[i])
				pk.Created, pk.Origin = now, publisherID
				ws = append(ws, store.Write{Topic: pk.TopicName, Value: store.EncodeServer(publisherID, &pk)})
			}
		}
		p.commit = time.Now()
		_ = p.store.Write(ws) // a failure is logged, and retried with the next
		clear(ws)
		p.writes = ws
	}
	for i := range batch {
		m := &batch[i]
		p.publish(m)
		if p.streak++; p.streak >= p.yieldEvery {
			// A backlog: let the subscribers' writers, readied by what
			// was just published, drain their queues before more comes.
			// Otherwise, on a busy core, a dashboard's writer waits
			// behind every client's reader while the backlog overflows
			// its queue (--client-queue) and it loses transitions.
			p.streak = 0
			runtime.Gosched()
		}
	}
}

func (p *publisher) packet(m *message) packets.Packet {
	return packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Publish, Qos: 1, Retain: m.retain},
		TopicName:   m.topic,
		Payload:     m.payload,
		PacketID:    1, // mochi validates it; the inline path never acks
		Properties: packets.Properties{
			MessageExpiryInterval: m.expiry,
			ContentType:           "application/json",
			PayloadFormat:         1, // UTF-8
			PayloadFormatFlag:     true,
		},
	}
}

// publish sends m to the subscribers it matches now; with the RETAIN flag
// mochi also retains it (an empty one deletes what is retained), gives it
// to subscriptions made later, and expires an EXIT when its message expiry
// has passed. The store hook skips it: send has stored it.
func (p *publisher) publish(m *message) {
	if !m.ingest.IsZero() {
		p.publishLatency.Observe(time.Since(m.ingest))
	}
	if err := p.srv.InjectPacket(p.cl, p.packet(m)); err != nil {
		p.failed.Inc()
		p.log.Error("publish failed", "topic", m.topic, "error", err)
	}
}

// close publishes what is queued and stops the goroutine. The queue stays
// open: a reject racing with shutdown lands in its buffer, unpublished,
// rather than panicking a client goroutine. Close the engine first.
func (p *publisher) close() {
	p.closed.Do(func() { close(p.stop) })
	<-p.done
}

// Transition implements engine.Sink. It blocks when the queue is full:
// a decided transition is never dropped, and the back-pressure reaches the
// trackers as full engine queues (QoS 1: "quota exceeded").
func (p *publisher) Transition(t *engine.Transition) {
	m := message{
		topic:   output.TransitionTopic(p.cfg.TransitionPrefix, t.Fence, t.Device),
		payload: output.TransitionJSON(t, t.Decided),
		retain:  true,
	}
	if !t.Timer {
		m.ingest = t.Ingest
	}
	if t.Type == engine.Exit {
		// The retained map stays bounded: an EXIT only says "outside",
		// which is also what no message says.
		m.expiry = uint32(p.cfg.ExitExpiry / time.Second)
	}
	if t.Historic {
		// It happened in the past: subscribers see it, flagged, and the
		// retained current state, which newer pings decided, stays.
		m.retain, m.expiry = false, 0
	}
	if t.Reason == engine.ReasonFenceRemoved {
		// The fence is gone: subscribers see the EXIT, and its retained
		// topics are cleared (an empty retained publish deletes).
		m.retain = false
		p.queue <- m
		m = message{topic: m.topic, retain: true}
	}
	p.queue <- m
}

// Late implements engine.Sink.
func (p *publisher) Late(l *engine.Late) {
	p.side(message{topic: output.LateTopic(p.cfg.LateTopic, l.Ping.Device), payload: output.LateJSON(l)})
}

// Rejected implements ingest.Rejects. A device id that is not a usable
// topic level is reported on the reject topic itself.
func (p *publisher) Rejected(device, topic, reason, message_ string, body []byte) {
	p.side(message{
		topic:   output.RejectTopic(p.cfg.RejectTopic, device),
		payload: output.RejectJSON(device, topic, reason, message_, body),
	})
}

// side queues a late or reject report without blocking the caller (a
// client's goroutine or a shard): when the queue is full it is counted
// and dropped, the one place output is shed, and never a transition.
func (p *publisher) side(m message) {
	select {
	case p.queue <- m:
	default:
		p.dropped.Inc()
	}
}
