// Package puback keeps a connection's deferred PUBACKs: under serve
// --cluster a QoS 1 ping is acknowledged once the ping stream stored it,
// while the connection's reader goes on to its next packet, and the
// PUBACKs must still go out in the order of their PUBLISHes.
package puback

import (
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Queue is one connection's deferred PUBACKs. They go out in the order of
// their PUBLISHes ([MQTT-4.6.0-2]) whatever order the answers come in,
// written by one goroutine at a time, started when the oldest is answered
// and ended when none is left that can go.
type Queue struct {
	write func([]packets.Packet) error // the connection's WritePackets
	max   int                          // deferred PUBACKs per connection

	mu      sync.Mutex
	room    sync.Cond // signalled when acks leave the queue or it closes
	q       []deferredAck
	head    uint64 // sequence number of q[0]
	writing bool   // a goroutine is writing the answered head
	closed  bool
}

// deferredAck is a QoS 1 PUBLISH waiting for its answer.
type deferredAck struct {
	id       uint16
	answered bool
	send     bool // else no PUBACK at all (MQTT 3.1.1, refused)
	code     byte // the PUBACK's reason code
}

// NewQueue returns a queue that writes with write (the connection's
// WritePackets) and holds at most max unwritten.
func NewQueue(write func([]packets.Packet) error, max int) *Queue {
	a := &Queue{write: write, max: max}
	a.room.L = &a.mu
	return a
}

// Add queues a PUBACK for packet id, waiting while the connection has max
// of them queued, and returns its sequence number for Answer.
func (a *Queue) Add(id uint16) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	for len(a.q) >= a.max && !a.closed {
		a.room.Wait()
	}
	a.q = append(a.q, deferredAck{id: id})
	return a.head + uint64(len(a.q)) - 1
}

// Answer settles PUBACK seq: sent with reason code code, or not at all.
// It never blocks on the network: the writing is left to a goroutine.
func (a *Queue) Answer(seq uint64, send bool, code byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	e := &a.q[seq-a.head]
	e.answered, e.send, e.code = true, send, code
	if !a.writing && a.q[0].answered {
		a.writing = true
		go a.flush()
	}
}

// flush writes the answered PUBACKs at the head of the queue, in order,
// until the head is one still waiting for its answer.
func (a *Queue) flush() {
	var batch []deferredAck
	var acks []packets.Packet
	for {
		a.mu.Lock()
		n := 0
		for n < len(a.q) && a.q[n].answered {
			n++
		}
		if n == 0 {
			a.writing = false
			a.room.Broadcast() // idle: a PUBACK of mochi's may go now
			a.mu.Unlock()
			return
		}
		batch = append(batch[:0], a.q[:n]...)
		a.q = a.q[n:]
		if len(a.q) == 0 {
			a.q = nil // let a burst's array go
		}
		a.head += uint64(n)
		a.room.Broadcast()
		a.mu.Unlock()
		acks = acks[:0]
		for _, e := range batch {
			if e.send {
				acks = append(acks, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: e.id, ReasonCode: e.code})
			}
		}
		if len(acks) > 0 {
			// One write for those answered together (mochi patch 0025). A
			// closed connection fails it: its tracker has no PUBACK and
			// sends the pings again, which the stream stores once.
			_ = a.write(acks)
		}
	}
}

// WaitIdle returns once every queued PUBACK is written (or the connection
// closed): a PUBACK that mochi writes after the hook returns must not
// overtake them.
func (a *Queue) WaitIdle() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for (len(a.q) > 0 || a.writing) && !a.closed {
		a.room.Wait()
	}
}

// Close releases the connection's reader from its waits: the connection
// is gone, and the answers still to come write nothing that matters.
func (a *Queue) Close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	a.room.Broadcast()
}

// Queues are the connections' queues.
type Queues struct {
	// Max is each queue's bound (NewQueue).
	Max int
	m   sync.Map // *mqtt.Client → *Queue
}

// Of returns cl's queue, made on its first deferred PUBACK.
func (qs *Queues) Of(cl *mqtt.Client) *Queue {
	if a, ok := qs.m.Load(cl); ok {
		return a.(*Queue)
	}
	a, _ := qs.m.LoadOrStore(cl, NewQueue(cl.WritePackets, qs.Max))
	return a.(*Queue)
}

// WaitIdle waits until cl has no deferred PUBACK left to write.
func (qs *Queues) WaitIdle(cl *mqtt.Client) {
	if a, ok := qs.m.Load(cl); ok {
		a.(*Queue).WaitIdle()
	}
}

// Drop forgets cl's queue when it disconnects.
func (qs *Queues) Drop(cl *mqtt.Client) {
	if a, ok := qs.m.LoadAndDelete(cl); ok {
		a.(*Queue).Close()
	}
}
