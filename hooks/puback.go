package hooks

import (
	"sync"
	"sync/atomic"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/mochi-mqtt/server/v2/system"
)

// pubacker acknowledges the QoS 1 publishes the telemetry hook does not
// route, itself, and hands them back to mochi as QoS 0: mochi keeps each
// inbound QoS 1 acknowledgement in the client's inflight map (an 800-byte
// packet, allocated) for the instant between building and writing it,
// half the bytes the broker allocated per ping. The PUBACK is the one
// mochi would write and goes out at the same point of the client's packet
// order; routed publishes keep their QoS for their subscribers. The
// common one, with no properties to carry, is four bytes written straight
// to the connection: mochi's WritePacket copies the 800-byte packet
// through its encoder and two rounds of hooks for them, 5 % of the
// broker's CPU at the ceiling.
type pubacker struct {
	bufs sync.Pool    // *[4]byte: a slice given to net.Conn.Write escapes
	info *system.Info // the server's $SYS counters; nil: not counted
}

// ack acknowledges pk and hands it back as QoS 0, so that mochi does not
// acknowledge it itself.
func (a *pubacker) ack(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	if pk.FixedHeader.Qos != 1 {
		return pk
	}
	pk.FixedHeader.Qos = 0
	// mochi's writer is needed for a PUBACK that carries user properties
	// back (MQTT 5), and for a client that subscribes: while messages are
	// queued to it, mochi holds what it writes in a buffer of its own, and
	// four bytes written past that buffer would overtake an earlier
	// PUBACK (a refused ping's) held in it — PUBACKs must keep the order
	// of the publishes [MQTT-4.6.0-2].
	if len(pk.Properties.User) > 0 && cl.Properties.ProtocolVersion == 5 || cl.State.Subscriptions.Len() > 0 {
		// A failed write is the connection failing: its reader finds out next.
		_ = cl.WritePacket(packets.Packet{
			FixedHeader: packets.FixedHeader{Type: packets.Puback},
			PacketID:    pk.PacketID,
			Properties:  pk.Properties,
		})
		return pk
	}
	a.write(cl, pk.PacketID)
	return pk
}

// write writes the four-byte PUBACK for packet id: what mochi encodes for
// a PUBACK with reason 0 and no properties, in MQTT 3.1.1 and 5 alike.
func (a *pubacker) write(cl *mqtt.Client, id uint16) {
	if cl.Net.Conn == nil || cl.Closed() { // as WritePacket: nothing to write to
		return
	}
	b, _ := a.bufs.Get().(*[4]byte)
	if b == nil {
		b = new([4]byte)
	}
	*b = [4]byte{packets.Puback << 4, 2, byte(id >> 8), byte(id)}
	cl.Lock() // mochi writes under the client's lock: keep its order
	n, err := cl.Net.Conn.Write(b[:])
	cl.Unlock()
	a.bufs.Put(b)
	if err == nil && a.info != nil {
		atomic.AddInt64(&a.info.BytesSent, int64(n))
		atomic.AddInt64(&a.info.PacketsSent, 1)
	}
}

// refuse writes an MQTT 5 PUBACK with reason code, as mochi builds it for
// an error its hooks return: the reason in the code and the reason string.
// Not inlined: its 1.6 KiB packet would sit in the frame of every
// connection reader's path to the engine, and deepen every reader's stack.
//
//go:noinline
func (a *pubacker) refuse(cl *mqtt.Client, id uint16, code packets.Code) {
	// A failed write is the connection failing: its reader finds out next.
	_ = cl.WritePacket(packets.Packet{
		FixedHeader: packets.FixedHeader{Type: packets.Puback},
		PacketID:    id,
		ReasonCode:  code.Code,
		Properties:  packets.Properties{ReasonString: code.Reason},
	})
}
