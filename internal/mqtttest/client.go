// Package mqtttest provides the MQTT 5 client that edgefence's end-to-end
// tests talk to a real broker with: paho.golang over a real connection,
// every message it receives kept in order, and a barrier topic of its own
// to know when the broker has handled everything sent before; and, for
// tests of one connection, a loopback TCP pair (TCPPair).
package mqtttest

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	pahopackets "github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
)

var seq atomic.Int64

// ID returns name with a suffix unique in this test binary: client ids
// never collide across tests sharing a broker.
func ID(name string) string { return fmt.Sprintf("%s-%d", name, seq.Add(1)) }

// Client is a connected MQTT 5 client. It is disconnected when the test
// ends.
type Client struct {
	T    *testing.T
	Paho *paho.Client
	// Msgs has every message received, in the order the broker sent them.
	Msgs chan *paho.Publish
	// Barrier is a topic only this client subscribes to (see Sync); empty
	// until Connect subscribes to it.
	Barrier string
	// Wait bounds every call: connect, subscribe, publish, Next.
	Wait time.Duration
	// RetainAsPublished is the option Subscribe asks for: with it, live
	// messages show whether the broker retained them; without it, the
	// retain flag marks a retained message replayed on subscription.
	RetainAsPublished bool
}

// Dial connects over conn with cp (see ID for its ClientID). On success
// the client is disconnected when the test ends; on failure conn is closed
// and the CONNACK (if one came) and the error are returned.
func Dial(t *testing.T, conn net.Conn, cp *paho.Connect, wait time.Duration) (*Client, *paho.Connack, error) {
	t.Helper()
	cl := &Client{T: t, Msgs: make(chan *paho.Publish, 4096), Wait: wait}
	cl.Paho = paho.NewClient(paho.ClientConfig{
		// paho writes a packet in several Writes, from several goroutines
		// (its first PINGREQ races the first PUBLISH): atomic on a TCP
		// socket (writev), interleaved on TLS and WebSocket without this.
		Conn: pahopackets.NewThreadSafeConn(conn),
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){
			func(pr paho.PublishReceived) (bool, error) {
				select {
				case cl.Msgs <- pr.Packet:
				default:
					t.Errorf("%s: receive buffer full, dropped %s", cp.ClientID, pr.Packet.Topic)
				}
				return true, nil
			},
		},
		PacketTimeout: wait,
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ca, err := cl.Paho.Connect(ctx, cp)
	if err != nil {
		conn.Close()
		return nil, ca, err
	}
	t.Cleanup(func() { _ = cl.Paho.Disconnect(&paho.Disconnect{ReasonCode: 0}) })
	return cl, ca, nil
}

// Connect dials addr over TCP, connects with a clean start under ID(name)
// and subscribes to the client's barrier topic, failing the test on any
// error.
func Connect(t *testing.T, addr, name string, wait time.Duration) *Client {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	id := ID(name)
	cl, ca, err := Dial(t, conn, &paho.Connect{ClientID: id, KeepAlive: 30, CleanStart: true}, wait)
	if err != nil {
		t.Fatalf("connect %s: %v (%+v)", id, err, ca)
	}
	cl.Barrier = "edgefence-test/barrier/" + id
	cl.Subscribe(cl.Barrier)
	return cl
}

// Subscribe subscribes at QoS 1 and fails the test unless every filter is
// granted.
func (cl *Client) Subscribe(filters ...string) {
	cl.T.Helper()
	s := &paho.Subscribe{}
	for _, f := range filters {
		s.Subscriptions = append(s.Subscriptions, paho.SubscribeOptions{Topic: f, QoS: 1, RetainAsPublished: cl.RetainAsPublished})
	}
	ctx, cancel := context.WithTimeout(context.Background(), cl.Wait)
	defer cancel()
	sa, err := cl.Paho.Subscribe(ctx, s)
	if err != nil {
		cl.T.Fatalf("subscribe %v: %v", filters, err)
	}
	for i, rc := range sa.Reasons {
		if rc >= 0x80 {
			cl.T.Fatalf("subscribe %s: reason %#x", filters[i], rc)
		}
	}
}

// Publish publishes and, for QoS 1, returns the PUBACK reason code.
func (cl *Client) Publish(topic string, qos byte, payload []byte) byte {
	cl.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cl.Wait)
	defer cancel()
	pr, err := cl.Paho.Publish(ctx, &paho.Publish{Topic: topic, QoS: qos, Payload: payload})
	if pr == nil {
		if err != nil {
			cl.T.Fatalf("publish %s: %v", topic, err)
		}
		return 0
	}
	return pr.ReasonCode
}

// Next returns the next message, failing the test after Wait.
func (cl *Client) Next(what string) *paho.Publish {
	cl.T.Helper()
	select {
	case m := <-cl.Msgs:
		return m
	case <-time.After(cl.Wait):
		cl.T.Fatalf("no message within %v: want %s", cl.Wait, what)
		return nil
	}
}

// Sync publishes a QoS 1 message on the client's barrier topic and returns
// everything received before it. The broker handles a client's packets in
// order and queues its outgoing messages in order, so the returned
// messages are exactly those queued for the client before the barrier was
// processed (retained messages of an earlier SUBSCRIBE and whatever other
// clients had published by then included).
func (cl *Client) Sync() []*paho.Publish {
	cl.T.Helper()
	topic := cl.Barrier
	marker := fmt.Appendf(nil, "barrier-%d", seq.Add(1))
	if rc := cl.Publish(topic, 1, marker); rc >= 0x80 {
		cl.T.Fatalf("barrier publish on %s: reason %#x", topic, rc)
	}
	var got []*paho.Publish
	for {
		m := cl.Next("barrier on " + topic)
		if m.Topic == topic && string(m.Payload) == string(marker) {
			return got
		}
		got = append(got, m)
	}
}
