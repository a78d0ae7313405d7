// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2023 mochi-mqtt, mochi-co
// SPDX-FileContributor: mochi-co

package mqtt

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/xid"

	"github.com/mochi-mqtt/server/v2/mempool"
	"github.com/mochi-mqtt/server/v2/packets"
)

// writeBufferPool recycles the buffers WritePacket encodes packets into and
// the buffer batching a client's queued writes (Net.outbuf), which were
// otherwise allocated and grown afresh for every packet sent. Buffers that
// grew past 64 KiB are left to the garbage collector.
var writeBufferPool = mempool.NewBuffer(64 * 1024)

const (
	defaultKeepalive             uint16 = 10 // the default connection keepalive value in seconds.
	defaultClientProtocolVersion byte   = 4  // the default mqtt protocol version of connecting clients (if somehow unspecified).
	minimumKeepalive             uint16 = 5  // the minimum recommended keepalive - values under with display a warning.
)

var (
	ErrMinimumKeepalive = errors.New("client keepalive is below minimum recommended value and may exhibit connection instability")
)

// ReadFn is the function signature for the function used for reading and processing new packets.
type ReadFn func(*Client, packets.Packet) error

// Clients contains a map of the clients known by the broker.
type Clients struct {
	internal map[string]*Client // clients known by the broker, keyed on client id.
	sync.RWMutex
}

// NewClients returns an instance of Clients.
func NewClients() *Clients {
	return &Clients{
		internal: make(map[string]*Client),
	}
}

// Add adds a new client to the clients map, keyed on client id.
func (cl *Clients) Add(val *Client) {
	cl.Lock()
	defer cl.Unlock()
	cl.internal[val.ID] = val
}

// GetAll returns all the clients.
func (cl *Clients) GetAll() map[string]*Client {
	cl.RLock()
	defer cl.RUnlock()
	m := map[string]*Client{}
	for k, v := range cl.internal {
		m[k] = v
	}
	return m
}

// appendAll appends every client to cls and returns the result; unlike GetAll
// it builds no map.
func (cl *Clients) appendAll(cls []*Client) []*Client {
	cl.RLock()
	defer cl.RUnlock()
	for _, c := range cl.internal {
		cls = append(cls, c)
	}
	return cls
}

// Get returns the value of a client if it exists.
func (cl *Clients) Get(id string) (*Client, bool) {
	cl.RLock()
	defer cl.RUnlock()
	val, ok := cl.internal[id]
	return val, ok
}

// Len returns the length of the clients map.
func (cl *Clients) Len() int {
	cl.RLock()
	defer cl.RUnlock()
	val := len(cl.internal)
	return val
}

// Delete removes a client from the internal map.
func (cl *Clients) Delete(id string) {
	cl.Lock()
	defer cl.Unlock()
	delete(cl.internal, id)
}

// deleteIf removes a client from the internal map if it is still the client
// under its id, and reports whether it was: a newer connection with the same
// client id may have replaced it.
func (cl *Clients) deleteIf(val *Client) bool {
	cl.Lock()
	defer cl.Unlock()
	if cur, ok := cl.internal[val.ID]; !ok || cur != val {
		return false
	}
	delete(cl.internal, val.ID)
	return true
}

// GetByListener returns clients matching a listener id.
func (cl *Clients) GetByListener(id string) []*Client {
	cl.RLock()
	defer cl.RUnlock()
	clients := make([]*Client, 0, cl.Len())
	for _, client := range cl.internal {
		if client.Net.Listener == id && !client.Closed() {
			clients = append(clients, client)
		}
	}
	return clients
}

// Client contains information about a client known by the broker.
type Client struct {
	Properties   ClientProperties // client properties
	State        ClientState      // the operational state of the client.
	Net          ClientConnection // network connection state of the client
	ID           string           // the client id.
	ops          *ops             // ops provides a reference to server ops.
	sync.RWMutex                  // mutex
}

// ClientConnection contains the connection transport and metadata for the client.
type ClientConnection struct {
	Conn     net.Conn      // the net.Conn used to establish the connection
	bconn    *bufio.Reader // a buffered net.Conn for reading packets; pooled while the connection is idle
	outbuf   *bytes.Buffer // a buffer for writing packets
	holdAt   time.Time     // when the reader began to hold acknowledgements; the reader's own
	hold     atomic.Bool   // the reader has more packets read: acknowledgements wait in outbuf
	held     atomic.Bool   // outbuf holds acknowledgements because of hold or batch; set under the client's lock
	batch    atomic.Int32  // WritePackets calls under way: acknowledgements wait in outbuf as for hold
	Remote   string        // the remote address of the client
	Listener string        // listener id of the client
	Inline   bool          // if true, the client is the built-in 'inline' embedded client

	raw syscall.RawConn // the connection's descriptor, waited on while idle; nil if it has none
	src connReader      // what a pooled bconn reads from

	// deadline is the read and write deadline refreshDeadline last set, if
	// deadlineSet: one set before it (by a listener, say) is not known.
	// The reader's own.
	deadline    time.Time
	deadlineSet bool
}

// ClientProperties contains the properties which define the client behaviour.
type ClientProperties struct {
	Props           packets.Properties
	Will            Will
	Username        []byte
	ProtocolVersion byte
	Clean           bool
}

// Will contains the last will and testament details for a client connection.
type Will struct {
	Payload           []byte                 // -
	User              []packets.UserProperty // -
	TopicName         string                 // -
	Flag              uint32                 // 0,1
	WillDelayInterval uint32                 // -
	Qos               byte                   // -
	Retain            bool                   // -
}

// ClientState tracks the state of the client.
type ClientState struct {
	TopicAliases    TopicAliases         // a map of topic aliases
	stopCause       atomic.Value         // reason for stopping
	Inflight        *Inflight            // a map of in-flight qos messages
	Subscriptions   *Subscriptions       // a map of the subscription filters a client maintains
	disconnected    int64                // the time the client disconnected in unix time, for calculating expiry
	outbound        *clientOutboundQueue // queue for pending outbound packets
	endOnce         sync.Once            // only end once
	isTakenOver     atomic.Bool          // used to identify orphaned clients
	packetID        uint32               // the current highest packetID
	open            context.Context      // indicate that the client is open for packet exchange
	cancelOpen      context.CancelFunc   // cancel function for open context
	outboundQty     int32                // number of messages currently in the outbound queue
	retained        []retainedBatch      // retained messages owed to new subscriptions, oldest first
	Keepalive       uint16               // the number of seconds the connection can wait
	ServerKeepalive bool                 // keepalive was set by the server
}

// retainedBatch is what a new subscription is owed: the retained messages
// matching its filter when it was made, sent in order as the client makes
// room for them.
type retainedBatch struct {
	sub packets.Subscription
	pks []packets.Packet
}

// newClient returns a new instance of Client. This is almost exclusively used by Server
// for creating new clients, but it lives here because it's not dependent.
func newClient(c net.Conn, o *ops) *Client {
	ctx, cancel := context.WithCancel(context.Background())
	cl := &Client{
		State: ClientState{
			Inflight:      NewInflights(),
			Subscriptions: NewSubscriptions(),
			TopicAliases:  NewTopicAliases(o.options.Capabilities.TopicAliasMaximum),
			open:          ctx,
			cancelOpen:    cancel,
			Keepalive:     defaultKeepalive,
			outbound:      newClientOutboundQueue(o.options.Capabilities.MaximumClientWritesPending),
		},
		Properties: ClientProperties{
			ProtocolVersion: defaultClientProtocolVersion, // default protocol version
		},
		ops: o,
	}

	if c != nil {
		cl.Net = ClientConnection{
			Conn:   c,
			bconn:  bufio.NewReaderSize(c, o.options.ClientNetReadBufferSize),
			raw:    rawConnOf(c),
			Remote: c.RemoteAddr().String(),
		}
	}

	return cl
}

// clientOutboundQueue holds the packets waiting for a client's writer, at most
// limit of them. It grows with what is queued and gives the memory back once
// drained: a channel with a buffer of MaximumClientWritesPending allocated
// the whole bound for every client as it connected, whether anything was
// ever queued for it or not.
type clientOutboundQueue struct {
	sync.Mutex
	pks   []*packets.Packet // queued packets, oldest at head
	head  int               // index of the oldest queued packet in pks
	limit int               // the most packets queued at once
	ready chan struct{}     // signalled when a packet is pushed onto an empty queue
	room  chan struct{}     // signalled when a packet is taken from a full queue

	writing   bool // a writer is taking the queued packets; pop clears it when the queue is empty
	dedicated bool // a WriteLoop serves the queue: put leaves the writer's role to it
}

// clientOutboundQueueKeep is the capacity a drained queue keeps for reuse; memory
// grown past it by a burst is released when the queue empties.
const clientOutboundQueueKeep = 64

func newClientOutboundQueue(limit int32) *clientOutboundQueue {
	return &clientOutboundQueue{
		limit: int(limit),
		ready: make(chan struct{}, 1),
		room:  make(chan struct{}, 1),
	}
}

// push queues pk, and returns false without queueing it if the queue is full.
func (q *clientOutboundQueue) push(pk *packets.Packet) bool {
	ok, _ := q.put(pk, false)
	return ok
}

// put queues pk, and returns false without queueing it if the queue is
// full. With claim, if no writer is taking packets from the queue (and
// no WriteLoop serves it), the caller takes the writer's role: start
// reports that it must start one.
func (q *clientOutboundQueue) put(pk *packets.Packet, claim bool) (ok, start bool) {
	q.Lock()
	n := len(q.pks) - q.head
	if n >= q.limit {
		q.Unlock()
		return false, false
	}
	if len(q.pks) == cap(q.pks) && q.head > 0 { // reuse the space before head rather than grow
		copy(q.pks, q.pks[q.head:])
		clear(q.pks[n:])
		q.pks = q.pks[:n]
		q.head = 0
	}
	q.pks = append(q.pks, pk)
	if claim && !q.writing && !q.dedicated {
		q.writing, start = true, true
	}
	q.Unlock()

	if n == 0 { // a WriteLoop may be waiting: it waits only on an empty queue
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
	return true, start
}

// pop takes the oldest queued packet, and returns false if there is none.
func (q *clientOutboundQueue) pop() (*packets.Packet, bool) {
	q.Lock()
	defer q.Unlock()
	if q.head == len(q.pks) {
		q.writing = false // under the lock put checks it with: no packet is left without a writer
		return nil, false
	}
	full := len(q.pks)-q.head >= q.limit
	pk := q.pks[q.head]
	q.pks[q.head] = nil
	q.head++
	if full { // pushWait may be waiting
		select {
		case q.room <- struct{}{}:
		default:
		}
	}
	if q.head == len(q.pks) {
		q.head = 0
		q.pks = q.pks[:0]
		if cap(q.pks) > clientOutboundQueueKeep {
			q.pks = nil
		}
	}
	return pk, true
}

// pushWait queues pk, waiting while the queue is full, and returns false
// without queueing it if done is closed first. One goroutine at a time may
// wait.
func (q *clientOutboundQueue) pushWait(pk *packets.Packet, done <-chan struct{}) bool {
	ok, _ := q.putWait(pk, done, false)
	return ok
}

// putWait is put, waiting while the queue is full as pushWait does.
func (q *clientOutboundQueue) putWait(pk *packets.Packet, done <-chan struct{}, claim bool) (ok, start bool) {
	for {
		if ok, start = q.put(pk, claim); ok {
			return ok, start
		}
		select {
		case <-q.room:
		case <-done:
			return false, false
		}
	}
}

// claim takes the writer's role if no writer has it, and reports whether
// it did.
func (q *clientOutboundQueue) claim() bool {
	q.Lock()
	defer q.Unlock()
	if q.writing {
		return false
	}
	q.writing = true
	return true
}

// serveWith marks the queue as served by a WriteLoop.
func (q *clientOutboundQueue) serveWith() {
	q.Lock()
	q.dedicated = true
	q.Unlock()
}

// len returns the number of queued packets.
func (q *clientOutboundQueue) len() int {
	q.Lock()
	defer q.Unlock()
	return len(q.pks) - q.head
}

// WriteLoop ranges over pending outbound messages and writes them to the client
// connection until the client closes. The server does not need it: a client's
// queued messages are written by a goroutine started when a message is queued
// for an idle client (see queueOutbound), which ends when the queue is empty.
// A client given a WriteLoop has its messages written by it instead.
func (cl *Client) WriteLoop() {
	cl.State.outbound.serveWith()
	for {
		select {
		case <-cl.State.outbound.ready:
			if cl.State.outbound.claim() {
				cl.writeOutbound()
			}
		case <-cl.State.open.Done():
			return
		}
	}
}

// queueOutbound queues pk for the client, waiting for room if wait is set
// until the client closes, and starts a writer for the queue if none is
// running. It returns false if pk was not queued.
func (cl *Client) queueOutbound(pk *packets.Packet, wait bool) bool {
	var ok, start bool
	if wait {
		ok, start = cl.State.outbound.putWait(pk, cl.State.open.Done(), true)
	} else {
		ok, start = cl.State.outbound.put(pk, true)
	}
	if start {
		go cl.writeOutbound()
	}
	return ok
}

// writeOutbound writes the client's queued packets until the queue is empty
// (giving up the writer's role) or the client closes. Its caller holds the
// writer's role.
func (cl *Client) writeOutbound() {
	for cl.State.open.Err() == nil {
		pk, ok := cl.State.outbound.pop()
		if !ok {
			return
		}
		if err := cl.WritePacket(*pk); err != nil {
			// TODO : Figure out what to do with error
			cl.ops.log.Debug("failed publishing packet", "error", err, "client", cl.ID, "packet", pk)
		}
		atomic.AddInt32(&cl.State.outboundQty, -1)
	}
}

// ParseConnect parses the connect parameters and properties for a client.
func (cl *Client) ParseConnect(lid string, pk packets.Packet) {
	cl.Net.Listener = lid

	cl.Properties.ProtocolVersion = pk.ProtocolVersion
	cl.Properties.Username = pk.Connect.Username
	cl.Properties.Clean = pk.Connect.Clean
	cl.Properties.Props = pk.Properties.Copy(false)

	if cl.Properties.Props.ReceiveMaximum > cl.ops.options.Capabilities.MaximumInflight { // 3.3.4 Non-normative
		cl.Properties.Props.ReceiveMaximum = cl.ops.options.Capabilities.MaximumInflight
	}

	if pk.Connect.Keepalive <= minimumKeepalive {
		cl.ops.log.Warn(
			ErrMinimumKeepalive.Error(),
			"client", cl.ID,
			"keepalive", pk.Connect.Keepalive,
			"recommended", minimumKeepalive,
		)
	}

	cl.State.Keepalive = pk.Connect.Keepalive                                              // [MQTT-3.2.2-22]
	cl.State.Inflight.ResetReceiveQuota(int32(cl.ops.options.Capabilities.ReceiveMaximum)) // server receive max per client
	cl.State.Inflight.ResetSendQuota(int32(cl.Properties.Props.ReceiveMaximum))            // client receive max
	cl.State.TopicAliases.Outbound = NewOutboundTopicAliases(cl.Properties.Props.TopicAliasMaximum)

	cl.ID = pk.Connect.ClientIdentifier
	if cl.ID == "" {
		cl.ID = xid.New().String() // [MQTT-3.1.3-6] [MQTT-3.1.3-7]
		cl.Properties.Props.AssignedClientID = cl.ID
	}

	if pk.Connect.WillFlag {
		cl.Properties.Will = Will{
			Qos:               pk.Connect.WillQos,
			Retain:            pk.Connect.WillRetain,
			Payload:           pk.Connect.WillPayload,
			TopicName:         pk.Connect.WillTopic,
			WillDelayInterval: pk.Connect.WillProperties.WillDelayInterval,
			User:              pk.Connect.WillProperties.User,
		}
		if pk.Properties.SessionExpiryIntervalFlag &&
			pk.Properties.SessionExpiryInterval < pk.Connect.WillProperties.WillDelayInterval {
			cl.Properties.Will.WillDelayInterval = pk.Properties.SessionExpiryInterval
		}
		if pk.Connect.WillFlag {
			cl.Properties.Will.Flag = 1 // atomic for checking
		}
	}
}

// deadlineSlack is how far past one and a half keepalives a connection's
// deadline may lie, so that it is set about once per deadlineSlack rather
// than before every packet: setting one resets a timer in the runtime's
// network poller.
const deadlineSlack = time.Second

// refreshDeadline refreshes the read/write deadline for the net.Conn
// connection: never sooner than one and a half keepalives from now
// [MQTT-3.1.2-22], and at most deadlineSlack later.
func (cl *Client) refreshDeadline(keepalive uint16) {
	var expiry time.Time // nil time can be used to disable deadline if keepalive = 0
	d := cl.Net.deadline
	if keepalive > 0 {
		expiry = time.Now().Add(time.Duration(keepalive+(keepalive/2)) * time.Second) // [MQTT-3.1.2-22]
		if cl.Net.deadlineSet && !d.Before(expiry) && d.Sub(expiry) <= deadlineSlack {
			return
		}
		expiry = expiry.Add(deadlineSlack)
	} else if cl.Net.deadlineSet && d.IsZero() {
		return
	}

	if cl.Net.Conn != nil {
		_ = cl.Net.Conn.SetDeadline(expiry) // [MQTT-3.1.2-22]
		cl.Net.deadline, cl.Net.deadlineSet = expiry, true
	}
}

// NextPacketID returns the next available (unused) packet id for the client.
// If no unused packet ids are available, an error is returned and the client
// should be disconnected.
func (cl *Client) NextPacketID() (i uint32, err error) {
	cl.Lock()
	defer cl.Unlock()

	i = atomic.LoadUint32(&cl.State.packetID)
	started := i
	overflowed := false
	for {
		if overflowed && i == started {
			return 0, packets.ErrQuotaExceeded
		}

		if i >= cl.ops.options.Capabilities.maximumPacketID {
			overflowed = true
			i = 0
			continue
		}

		i++

		if _, ok := cl.State.Inflight.Get(uint16(i)); !ok {
			atomic.StoreUint32(&cl.State.packetID, i)
			return i, nil
		}
	}
}

// ResendInflightMessages attempts to resend any pending inflight messages to connected clients.
func (cl *Client) ResendInflightMessages(force bool) error {
	if cl.State.Inflight.Len() == 0 {
		return nil
	}

	for _, tk := range cl.State.Inflight.GetAll(false) {
		if tk.FixedHeader.Type == packets.Publish {
			tk.FixedHeader.Dup = true // [MQTT-3.3.1-1] [MQTT-3.3.1-3]
		}

		cl.ops.hooks.OnQosPublish(cl, tk, tk.Created, 0)
		err := cl.WritePacket(tk)
		if err != nil {
			return err
		}

		if tk.FixedHeader.Type == packets.Puback || tk.FixedHeader.Type == packets.Pubcomp {
			if ok := cl.State.Inflight.Delete(tk.PacketID); ok {
				cl.ops.hooks.OnQosComplete(cl, tk)
				atomic.AddInt64(&cl.ops.info.Inflight, -1)
			}
		}
	}

	return nil
}

// ClearInflights deletes all inflight messages for the client, e.g. for a disconnected user with a clean session.
func (cl *Client) ClearInflights() {
	for _, tk := range cl.State.Inflight.GetAll(false) {
		if ok := cl.State.Inflight.Delete(tk.PacketID); ok {
			cl.ops.hooks.OnQosDropped(cl, tk)
			atomic.AddInt64(&cl.ops.info.Inflight, -1)
		}
	}
}

// ClearExpiredInflights deletes any inflight messages which have expired.
func (cl *Client) ClearExpiredInflights(now, maximumExpiry int64) []uint16 {
	deleted := []uint16{}
	if cl.State.Inflight.Len() == 0 {
		return deleted // most clients, most of the time: no copy of nothing to sort
	}
	for _, tk := range cl.State.Inflight.GetAll(false) {
		expired := tk.ProtocolVersion == 5 && tk.Expiry > 0 && tk.Expiry < now // [MQTT-3.3.2-5]

		// If the maximum message expiry interval is set (greater than 0), and the message
		// retention period exceeds the maximum expiry, the message will be forcibly removed.
		enforced := maximumExpiry > 0 && now-tk.Created > maximumExpiry

		if expired || enforced {
			if ok := cl.State.Inflight.Delete(tk.PacketID); ok {
				cl.ops.hooks.OnQosDropped(cl, tk)
				atomic.AddInt64(&cl.ops.info.Inflight, -1)
				deleted = append(deleted, tk.PacketID)
			}
		}
	}

	return deleted
}

// Read reads incoming packets from the connected client and transforms them into
// packets to be handled by the packetHandler.
func (cl *Client) Read(packetHandler ReadFn) error {
	return cl.readPackets(func(cl *Client, pk *packets.Packet) error {
		return packetHandler(cl, *pk)
	})
}

// readPackets is Read with a handler that takes the packet by pointer: the
// server's own reader passes it so down to the hooks rather than copying
// it (over 800 bytes) into every frame on the way.
func (cl *Client) readPackets(packetHandler func(*Client, *packets.Packet) error) error {
	var err error
	// The packet read into: a pointer to a packet on this stack would move
	// it to the heap for every packet, so it comes from packetPool, and goes
	// back there whenever the reader has no next packet at hand, so that an
	// idle connection holds none (see awaitPacket).
	var pk *packets.Packet
	defer func() {
		if pk != nil {
			putPacket(pk)
		}
	}()

	for {
		if cl.Closed() {
			return nil
		}

		cl.refreshDeadline(cl.State.Keepalive)
		if err = cl.awaitPacket(); err != nil {
			return err
		}
		fh := new(packets.FixedHeader)
		err = cl.ReadFixedHeader(fh)
		if err != nil {
			return err
		}

		if pk == nil {
			pk = packetPool.Get().(*packets.Packet)
		}
		err = cl.readPacketInto(fh, pk)
		if err != nil {
			return err
		}

		// While the next packet is already read, the acknowledgements this
		// one causes wait in the write buffer, so that a burst of packets
		// is answered with one write rather than one per packet. A client's
		// DISCONNECT closes the connection: what is held is written first.
		more := cl.nextPacketBuffered()
		if fh.Type == packets.Disconnect && cl.Net.hold.Load() {
			if err := cl.releaseAcks(); err != nil {
				return err
			}
		} else if more && !cl.Net.hold.Load() {
			cl.Net.holdAt = time.Now()
			cl.Net.hold.Store(true)
		}

		err = packetHandler(cl, pk) // Process inbound packet.
		*pk = packets.Packet{}      // what it refers to is the handler's now
		if !more {
			packetPool.Put(pk)
			pk = nil
		}
		if cl.Net.hold.Load() && (!more || err != nil || time.Since(cl.Net.holdAt) >= maxAckHold) {
			if ferr := cl.releaseAcks(); err == nil {
				err = ferr
			}
		}
		if err != nil {
			return err
		}
	}
}

// maxAckHold bounds how long a reader working through the packets it has
// read keeps their acknowledgements in the write buffer; it is checked
// between packets. (A variable so that a test can widen it.)
var maxAckHold = time.Millisecond

// nextPacketBuffered reports whether the read buffer holds the whole of the
// next packet, so that reading it will not wait for the network.
func (cl *Client) nextPacketBuffered() bool {
	n := cl.Net.bconn.Buffered()
	if n < 2 {
		return false
	}
	b, _ := cl.Net.bconn.Peek(n) // never more than is buffered: does not read
	remaining, multiplier := 0, 1
	for i := 1; i < len(b) && i <= 4; i++ { // the remaining length follows the first byte
		remaining += int(b[i]&127) * multiplier
		if b[i]&128 == 0 {
			return n >= i+1+remaining
		}
		multiplier *= 128
	}
	return false
}

// releaseAcks ends the reader's hold and writes the acknowledgements held.
// It takes the client's lock only if some are: a writer may hold the lock
// for as long as a slow client takes to read, and a reader of PUBACKs
// (a subscriber's) must not wait for it for nothing.
func (cl *Client) releaseAcks() error {
	cl.Net.hold.Store(false)
	if !cl.Net.held.Load() {
		return nil // a WritePacket holding one now sees hold false after it and flushes
	}
	cl.Lock()
	defer cl.Unlock()
	return cl.flushOutbuf()
}

// heldPacketType reports whether a packet of type t may wait in the write
// buffer while the reader holds acknowledgements: the small answers to a
// client's packets. Anything else flushes the buffer, held packets first.
func heldPacketType(t byte) bool {
	switch t {
	case packets.Puback, packets.Pubrec, packets.Pubrel, packets.Pubcomp,
		packets.Suback, packets.Unsuback, packets.Pingresp:
		return true
	}
	return false
}

// Stop instructs the client to shut down all processing goroutines and disconnect.
func (cl *Client) Stop(err error) {
	cl.State.endOnce.Do(func() {

		if cl.Net.Conn != nil {
			_ = cl.Net.Conn.Close() // omit close error
		}

		if err != nil {
			cl.State.stopCause.Store(err)
		}

		if cl.State.cancelOpen != nil {
			cl.State.cancelOpen()
		}

		atomic.StoreInt64(&cl.State.disconnected, time.Now().Unix())
	})
}

// StopCause returns the reason the client connection was stopped, if any.
func (cl *Client) StopCause() error {
	if cl.State.stopCause.Load() == nil {
		return nil
	}
	return cl.State.stopCause.Load().(error)
}

// StopTime returns the the time the client disconnected in unix time, else zero.
func (cl *Client) StopTime() int64 {
	return atomic.LoadInt64(&cl.State.disconnected)
}

// Closed returns true if client connection is closed.
func (cl *Client) Closed() bool {
	return cl.State.open == nil || cl.State.open.Err() != nil
}

func (cl *Client) IsTakenOver() bool {
	return cl.State.isTakenOver.Load()
}

// ReadFixedHeader reads in the values of the next packet's fixed header.
func (cl *Client) ReadFixedHeader(fh *packets.FixedHeader) error {
	if cl.Net.bconn == nil {
		return ErrConnectionClosed
	}

	b, err := cl.Net.bconn.ReadByte()
	if err != nil {
		return err
	}

	err = fh.Decode(b)
	if err != nil {
		return err
	}

	var bu int
	fh.Remaining, bu, err = packets.DecodeLength(cl.Net.bconn)
	if err != nil {
		return err
	}

	if cl.ops.options.Capabilities.MaximumPacketSize > 0 && uint32(fh.Remaining+1) > cl.ops.options.Capabilities.MaximumPacketSize {
		return packets.ErrPacketTooLarge // [MQTT-3.2.2-15]
	}

	atomic.AddInt64(&cl.ops.info.BytesReceived, int64(bu+1))
	return nil
}

// ReadPacket reads the remaining buffer into an MQTT packet.
func (cl *Client) ReadPacket(fh *packets.FixedHeader) (pk packets.Packet, err error) {
	hp := packetPool.Get().(*packets.Packet) // see packetPool
	err = cl.readPacketInto(fh, hp)
	pk = *hp
	putPacket(hp)
	return
}

// readPacketInto is ReadPacket into *pk, which must be zero.
func (cl *Client) readPacketInto(fh *packets.FixedHeader, pk *packets.Packet) (err error) {
	atomic.AddInt64(&cl.ops.info.PacketsReceived, 1)

	pk.ProtocolVersion = cl.Properties.ProtocolVersion // inherit client protocol version for decoding
	pk.FixedHeader = *fh
	p := make([]byte, pk.FixedHeader.Remaining)
	n, err := io.ReadFull(cl.Net.bconn, p)
	if err != nil {
		return err
	}

	atomic.AddInt64(&cl.ops.info.BytesReceived, int64(n))

	// p is the packet's own: the decoded topic, payload and properties
	// refer to it, and the next packet is read into a new one, so they
	// are decoded from it without a copy.
	switch pk.FixedHeader.Type {
	case packets.Connect:
		err = pk.ConnectDecode(p)
	case packets.Disconnect:
		err = pk.DisconnectDecode(p)
	case packets.Connack:
		err = pk.ConnackDecode(p)
	case packets.Publish:
		err = pk.PublishDecode(p)
		if err == nil {
			atomic.AddInt64(&cl.ops.info.MessagesReceived, 1)
		}
	case packets.Puback:
		err = pk.PubackDecode(p)
	case packets.Pubrec:
		err = pk.PubrecDecode(p)
	case packets.Pubrel:
		err = pk.PubrelDecode(p)
	case packets.Pubcomp:
		err = pk.PubcompDecode(p)
	case packets.Subscribe:
		err = pk.SubscribeDecode(p)
	case packets.Suback:
		err = pk.SubackDecode(p)
	case packets.Unsubscribe:
		err = pk.UnsubscribeDecode(p)
	case packets.Unsuback:
		err = pk.UnsubackDecode(p)
	case packets.Pingreq:
	case packets.Pingresp:
	case packets.Auth:
		err = pk.AuthDecode(p)
	default:
		err = fmt.Errorf("invalid packet type; %v", pk.FixedHeader.Type)
	}

	if err != nil {
		return err
	}

	if cl.ops.hooks.readInPlace.Load() {
		return cl.ops.hooks.onPacketReadInPlace(cl, pk)
	}
	if !cl.ops.hooks.Provides(OnPacketRead) {
		return nil // no copies of the packet for no hook
	}
	return cl.packetReadHooks(pk)
}

// packetReadHooks runs the OnPacketRead hooks on *pk by Hooks.OnPacketRead,
// in a frame of its own: its copies of the packet are on the reader's
// stack only when no hook reads packets in place.
//
//go:noinline
func (cl *Client) packetReadHooks(pk *packets.Packet) (err error) {
	*pk, err = cl.ops.hooks.OnPacketRead(cl, *pk)
	return err
}

// encodeHooks runs the OnPacketEncode hooks on *pk in a frame of its
// own, so that the copies of the packet they take and return are on the
// stack of the goroutine writing it only when a hook wants them.
//
//go:noinline
func (cl *Client) encodeHooks(pk *packets.Packet) {
	*pk = cl.ops.hooks.OnPacketEncode(cl, *pk)
}

// WritePackets encodes and writes pks to the client in order, as
// WritePacket does each, but the acknowledgements among them wait in the
// connection's write buffer and go out together, with one write, at the
// end (or before anything else written). It is for code that answers a
// client's packets outside its reader, several at a time: a hook that
// acknowledges publishes once a store has them, say. It stops at the
// first error.
func (cl *Client) WritePackets(pks []packets.Packet) error {
	cl.Net.batch.Add(1)
	var err error
	for _, pk := range pks {
		if err = cl.WritePacket(pk); err != nil {
			break
		}
	}
	// The last batch to end writes what waits, unless the reader holds
	// acknowledgements too: its release writes them (see releaseAcks).
	if cl.Net.batch.Add(-1) == 0 && cl.Net.held.Load() && !cl.Net.hold.Load() {
		cl.Lock()
		ferr := cl.flushOutbuf()
		cl.Unlock()
		if err == nil {
			err = ferr
		}
	}
	return err
}

// holding reports whether acknowledgements written now wait in the write
// buffer: the reader has more packets read, or a WritePackets is under way.
func (cl *Client) holding() bool {
	return cl.Net.hold.Load() || cl.Net.batch.Load() > 0
}

// WritePacket encodes and writes a packet to the client.
func (cl *Client) WritePacket(pk packets.Packet) error {
	if cl.Closed() {
		return ErrConnectionClosed
	}

	if cl.Net.Conn == nil {
		return nil
	}

	if pk.Expiry > 0 {
		expiry := pk.Expiry - time.Now().Unix()
		if expiry < 1 {
			expiry = 1
		}
		pk.Properties.MessageExpiryInterval = uint32(expiry) // [MQTT-3.3.2-6]
	}

	pk.ProtocolVersion = cl.Properties.ProtocolVersion
	if pk.Mods.MaxSize == 0 { // NB we use this statement to embed client packet sizes in tests
		pk.Mods.MaxSize = cl.Properties.Props.MaximumPacketSize
	}

	if cl.Properties.Props.RequestProblemInfoFlag && cl.Properties.Props.RequestProblemInfo == 0x0 {
		pk.Mods.DisallowProblemInfo = true // [MQTT-3.1.2-29] strict, no problem info on any packet if set
	}

	if pk.FixedHeader.Type != packets.Connack || cl.Properties.Props.RequestResponseInfo == 0x1 || cl.ops.options.Capabilities.Compatibilities.AlwaysReturnResponseInfo {
		pk.Mods.AllowResponseInfo = true // [MQTT-3.1.2-28] we need to know which properties we can encode
	}

	if cl.ops.hooks.encodeInPlace.Load() {
		return cl.writeInPlaceHooked(&pk)
	}
	if cl.ops.hooks.Provides(OnPacketEncode) {
		cl.encodeHooks(&pk)
	}
	return cl.writeEncoded(&pk)
}

// writeInPlaceHooked runs the OnPacketEncode hooks on a pooled copy of
// *pk and writes that (see packetPool).
//
//go:noinline
func (cl *Client) writeInPlaceHooked(pk *packets.Packet) error {
	hp := getPacket(pk)
	defer putPacket(hp)
	cl.ops.hooks.onPacketEncodeInPlace(cl, hp)
	return cl.writeEncoded(hp)
}

// writeEncoded encodes *pk and writes it, or queues it behind what the
// connection holds.
func (cl *Client) writeEncoded(pk *packets.Packet) error {
	var err error
	buf := writeBufferPool.Get()
	defer writeBufferPool.Put(buf)
	switch pk.FixedHeader.Type {
	case packets.Connect:
		err = pk.ConnectEncode(buf)
	case packets.Connack:
		err = pk.ConnackEncode(buf)
	case packets.Publish:
		err = pk.PublishEncode(buf)
	case packets.Puback:
		err = pk.PubackEncode(buf)
	case packets.Pubrec:
		err = pk.PubrecEncode(buf)
	case packets.Pubrel:
		err = pk.PubrelEncode(buf)
	case packets.Pubcomp:
		err = pk.PubcompEncode(buf)
	case packets.Subscribe:
		err = pk.SubscribeEncode(buf)
	case packets.Suback:
		err = pk.SubackEncode(buf)
	case packets.Unsubscribe:
		err = pk.UnsubscribeEncode(buf)
	case packets.Unsuback:
		err = pk.UnsubackEncode(buf)
	case packets.Pingreq:
		err = pk.PingreqEncode(buf)
	case packets.Pingresp:
		err = pk.PingrespEncode(buf)
	case packets.Disconnect:
		err = pk.DisconnectEncode(buf)
	case packets.Auth:
		err = pk.AuthEncode(buf)
	default:
		err = fmt.Errorf("%w: %v", packets.ErrNoValidPacketAvailable, pk.FixedHeader.Type)
	}
	if err != nil {
		return err
	}

	if pk.Mods.MaxSize > 0 && uint32(buf.Len()) > pk.Mods.MaxSize {
		return packets.ErrPacketTooLarge // [MQTT-3.1.2-24] [MQTT-3.1.2-25]
	}

	n, err := cl.writeLocked(pk.FixedHeader.Type, buf)
	if err != nil {
		return err
	}

	atomic.AddInt64(&cl.ops.info.BytesSent, n)
	atomic.AddInt64(&cl.ops.info.PacketsSent, 1)
	if pk.FixedHeader.Type == packets.Publish {
		atomic.AddInt64(&cl.ops.info.MessagesSent, 1)
	}

	cl.ops.hooks.OnPacketSent(cl, *pk, buf.Bytes())

	return nil
}

// writePuback writes the PUBACK of a successful QoS 1 publish with no
// properties, its 4 bytes the same in 3.1.1 and 5, without building a
// packet for it: for a server whose hooks do not look at what it writes
// (see Server.plainPuback).
func (cl *Client) writePuback(id uint16) error {
	if cl.Closed() {
		return ErrConnectionClosed
	}
	if cl.Net.Conn == nil {
		return nil
	}
	buf := writeBufferPool.Get()
	defer writeBufferPool.Put(buf)
	buf.Write([]byte{packets.Puback << 4, 2, byte(id >> 8), byte(id)})
	n, err := cl.writeLocked(packets.Puback, buf)
	if err != nil {
		return err
	}
	atomic.AddInt64(&cl.ops.info.BytesSent, n)
	atomic.AddInt64(&cl.ops.info.PacketsSent, 1)
	return nil
}

// writeLocked writes buf, an encoded packet of type typ, or queues it
// behind what the connection holds.
func (cl *Client) writeLocked(typ byte, buf *bytes.Buffer) (int64, error) {
	cl.Lock()
	defer cl.Unlock()
	hold := heldPacketType(typ) && cl.holding()
	if cl.State.outbound.len() == 0 && !hold {
		if cl.Net.outbuf == nil {
			return buf.WriteTo(cl.Net.Conn)
		}

		// first write to buffer, then flush buffer
		n, _ := cl.Net.outbuf.Write(buf.Bytes()) // will always be successful
		return int64(n), cl.flushOutbuf()
	}

	// there are more writes in the queue, or the reader holds acknowledgements
	if cl.Net.outbuf == nil {
		if buf.Len() >= cl.ops.options.ClientNetWriteBufferSize {
			return buf.WriteTo(cl.Net.Conn)
		}
		cl.Net.outbuf = writeBufferPool.Get()
	}

	n, _ := cl.Net.outbuf.Write(buf.Bytes()) // will always be successful
	if cl.Net.outbuf.Len() < cl.ops.options.ClientNetWriteBufferSize {
		if hold {
			cl.Net.held.Store(true)
			if !cl.holding() { // released meanwhile, maybe before held was set
				return int64(n), cl.flushOutbuf()
			}
		}
		return int64(n), nil
	}
	return int64(n), cl.flushOutbuf()
}

func (cl *Client) flushOutbuf() (err error) {
	if cl.Net.outbuf == nil {
		return
	}

	_, err = cl.Net.outbuf.WriteTo(cl.Net.Conn)
	if err == nil {
		writeBufferPool.Put(cl.Net.outbuf)
		cl.Net.outbuf = nil
		cl.Net.held.Store(false)
	}
	return
}
