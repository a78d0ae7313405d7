package bridge

// tracker is a device publishing telemetry: a plain MQTT 5 client with a
// clean session, connected for as long as the test needs it.
import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
)

type tracker struct {
	t *testing.T
	c *paho.Client
}

func connectTracker(t *testing.T, addr, user, pass string) *tracker {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	c := paho.NewClient(paho.ClientConfig{Conn: conn, PacketTimeout: wait})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cp := &paho.Connect{ClientID: fmt.Sprintf("tracker-%d", clientSeq.Add(1)), KeepAlive: 30, CleanStart: true}
	if user != "" {
		cp.Username, cp.UsernameFlag = user, true
		cp.Password, cp.PasswordFlag = []byte(pass), true
	}
	if ca, err := c.Connect(ctx, cp); err != nil {
		conn.Close()
		t.Fatalf("tracker connect: %v (%+v)", err, ca)
	}
	tr := &tracker{t: t, c: c}
	t.Cleanup(tr.close)
	return tr
}

func (tr *tracker) close() { _ = tr.c.Disconnect(&paho.Disconnect{ReasonCode: 0}) }

// publish publishes at QoS 1 and requires a successful PUBACK.
func (tr *tracker) publish(topic string, payload []byte) {
	tr.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	pr, err := tr.c.Publish(ctx, &paho.Publish{Topic: topic, QoS: 1, Payload: payload})
	if err != nil {
		tr.t.Fatalf("publish %s: %v", topic, err)
	}
	if pr.ReasonCode >= 0x80 {
		tr.t.Fatalf("publish %s: PUBACK %#x", topic, pr.ReasonCode)
	}
}

// ping publishes a canonical ping of device.
func (tr *tracker) ping(device string, lat, lon float64, tsMs int64) {
	tr.t.Helper()
	tr.publish("devices/"+device+"/telemetry", canonical(lat, lon, tsMs))
}

func canonical(lat, lon float64, tsMs int64) []byte {
	return fmt.Appendf(nil, `{"lat":%v,"lon":%v,"ts":%d}`, lat, lon, tsMs)
}

// received is one message an observer got.
type received struct {
	topic   string
	payload []byte
	retain  bool
	expiry  *uint32
}

// observer records what it receives on its filters. It has a persistent
// session, so it survives a broker restart that keeps the session, and it
// takes live messages only (retained ones are not sent on subscribe).
type observer struct {
	t    *testing.T
	cm   *autopaho.ConnectionManager
	subs atomic.Int64 // successful subscriptions: one per session
	mu   sync.Mutex
	got  []received
}

func observe(t *testing.T, upstream, user, pass string, filters ...string) *observer {
	t.Helper()
	o := &observer{t: t}
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	subscribed := make(chan struct{})
	var once sync.Once
	sub := &paho.Subscribe{}
	for _, f := range filters {
		sub.Subscriptions = append(sub.Subscriptions, paho.SubscribeOptions{Topic: f, QoS: 1, RetainHandling: 2, RetainAsPublished: true})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cfg := autopaho.ClientConfig{
		ServerUrls:            []*url.URL{u},
		KeepAlive:             30,
		SessionExpiryInterval: 3600,
		ReconnectBackoff:      autopaho.NewConstantBackoff(20 * time.Millisecond),
		ConnectTimeout:        2 * time.Second,
		ConnectUsername:       user,
		ConnectPassword:       []byte(pass),
		OnConnectionUp: func(cm *autopaho.ConnectionManager, ca *paho.Connack) {
			if ca.SessionPresent {
				return
			}
			go func() {
				sctx, scancel := context.WithTimeout(ctx, wait)
				defer scancel()
				if sa, err := cm.Subscribe(sctx, sub); err == nil && sa.Reasons[0] < 0x80 {
					o.subs.Add(1)
					once.Do(func() { close(subscribed) })
				}
			}()
		},
		ClientConfig: paho.ClientConfig{
			ClientID: fmt.Sprintf("observer-%d", clientSeq.Add(1)),
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
				r := received{topic: pr.Packet.Topic, payload: pr.Packet.Payload, retain: pr.Packet.Retain}
				if pr.Packet.Properties != nil {
					r.expiry = pr.Packet.Properties.MessageExpiry
				}
				o.mu.Lock()
				defer o.mu.Unlock()
				// A broker killed before it stored this observer's PUBACK
				// sends the message again, marked DUP, on the resumed
				// session: MQTT's at-least-once, not a second publish
				// by the bridge (whose repeats the tests look for).
				if pr.Packet.Duplicate() && slices.ContainsFunc(o.got, func(g received) bool {
					return g.topic == r.topic && bytes.Equal(g.payload, r.payload)
				}) {
					return true, nil
				}
				o.got = append(o.got, r)
				return true, nil
			}},
		},
	}
	cm, err := autopaho.NewConnection(ctx, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	o.cm = cm
	t.Cleanup(func() {
		dctx, dcancel := context.WithTimeout(context.Background(), wait)
		defer dcancel()
		_ = cm.Disconnect(dctx)
		cancel()
	})
	select {
	case <-subscribed:
	case <-time.After(wait):
		t.Fatalf("observer not subscribed to %v after %v", filters, wait)
	}
	return o
}

// messages returns what arrived on topics starting with prefix.
func (o *observer) messages(prefix string) []received {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []received
	for _, r := range o.got {
		if strings.HasPrefix(r.topic, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// transition is the part of a transition payload the tests compare.
type transition struct {
	Device string `json:"device"`
	Fence  string `json:"fence"`
	Type   string `json:"type"`
	Ts     int64  `json:"ts"`
}

func (tr transition) String() string {
	return fmt.Sprintf("%s %s %s %d", tr.Device, tr.Fence, tr.Type, tr.Ts)
}

// transitions returns the transitions received under prefix, in arrival
// order, as "device fence TYPE ts".
func (o *observer) transitions(prefix string) []string {
	o.t.Helper()
	var out []string
	for _, r := range o.messages(prefix + "/") {
		var tr transition
		if err := json.Unmarshal(r.payload, &tr); err != nil {
			o.t.Fatalf("transition on %s: %v: %s", r.topic, err, r.payload)
		}
		out = append(out, tr.String())
	}
	return out
}

// waitTransitions waits until n transitions have arrived under prefix.
func (o *observer) waitTransitions(prefix string, n int) []string {
	o.t.Helper()
	eventually(o.t, fmt.Sprintf("%d transitions under %s", n, prefix), func() bool { return len(o.messages(prefix+"/")) >= n })
	return o.transitions(prefix)
}

// sorted returns a sorted copy, for comparing logs whose devices
// interleave differently.
func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
