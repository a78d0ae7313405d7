package broker_test

// End-to-end tests of issue 21's limits: the publish rate limit follows
// the device (not the connection), a gateway carrying many devices works
// at the defaults, and a flood of bogus logins neither exhausts memory nor
// stalls a real device.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/evaluator/engine"
)

// rateLimitedTotal sums edgefence_rate_limited_total over its reasons.
func rateLimitedTotal(t *testing.T, srv *broker.Server) float64 {
	t.Helper()
	var sum float64
	for k, v := range metrics(t, srv) {
		if strings.HasPrefix(k, "edgefence_rate_limited_total{") {
			sum += v
		}
	}
	return sum
}

// publishRC publishes at QoS 1 over cl and returns the PUBACK's reason
// code, failing the test when none comes.
func publishRC(t *testing.T, cl *client5, topic string, payload []byte) byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	pr, err := cl.Paho.Publish(ctx, &paho.Publish{Topic: topic, QoS: 1, Payload: payload})
	if pr == nil {
		t.Fatalf("publish on %s: no PUBACK: %v", topic, err)
	}
	return pr.ReasonCode
}

// A device that floods and reconnects (under a new client id, as a
// reconnecting flooder would) finds its allowance where it left it: the
// limit is the device's, not the connection's. Another device on the same
// connection has its own allowance.
func TestRateLimitFollowsTheDeviceAcrossReconnects(t *testing.T) {
	cfg := testConfig(t)
	cfg.PublishRate, cfg.PublishBurst = 0.001, 5
	srv := start(t, cfg)

	topic := "devices/flood-1/telemetry"
	var codes []byte
	first := connect5(t, srv.MQTTAddr(), "flooder")
	for i := range 8 {
		codes = append(codes, publishRC(t, first, topic, canonical(outLat, outLon, nowMs()-60_000+int64(i))))
	}
	if err := first.Paho.Disconnect(&paho.Disconnect{}); err != nil {
		t.Fatal(err)
	}
	again := connect5(t, srv.MQTTAddr(), "flooder-again")
	for i := range 3 {
		codes = append(codes, publishRC(t, again, topic, canonical(outLat, outLon, nowMs()-50_000+int64(i))))
	}
	want := []byte{0, 0, 0, 0, 0, 0x97, 0x97, 0x97, 0x97, 0x97, 0x97}
	if !slices.Equal(codes, want) {
		t.Errorf("PUBACK reason codes %x, want %x (a burst of 5, then quota exceeded, across the reconnect)", codes, want)
	}
	if rc := publishRC(t, again, "devices/other-1/telemetry", canonical(outLat, outLon, nowMs()-10_000)); rc != 0 {
		t.Errorf("another device on the same connection: PUBACK %#x, want 0 (its own allowance)", rc)
	}
	if v := metric(t, srv, `edgefence_rate_limited_total{reason="device"}`); v != 6 {
		t.Errorf(`edgefence_rate_limited_total{reason="device"} = %v, want 6`, v)
	}
}

// The "done when": a gateway forwarding 300 devices at 10 Hz over
// 4 connections, QoS 0, gets every transition at the default limits, and
// nothing invented — anonymous, and logged in as users of the gateway
// role. Each device sends 20 pings, 100 ms apart: out, in, out, in, out,
// four of each, so 4 transitions each, 1,200 in all.
func TestGatewayOf300DevicesGetsEveryTransitionAtTheDefaults(t *testing.T) {
	for _, withAuth := range []bool{false, true} {
		t.Run(fmt.Sprintf("auth=%v", withAuth), func(t *testing.T) {
			cfg := testConfig(t)
			cfg.DataDir = "" // the transitions, not the disk
			dashCreds, gwCreds := anonymous, [4]creds{}
			if withAuth {
				cfg.Auth = writeUsers(t,
					testUser{name: "gw-0", role: "gateway"}, testUser{name: "gw-1", role: "gateway"},
					testUser{name: "gw-2", role: "gateway"}, testUser{name: "gw-3", role: "gateway"},
					testUser{name: "wall", role: "dashboard"})
				dashCreds = login("wall")
				for i := range gwCreds {
					gwCreds[i] = login(fmt.Sprintf("gw-%d", i))
				}
			}
			srv := start(t, cfg)
			gatewayScenario(t, srv, dashCreds, gwCreds)
		})
	}
}

func gatewayScenario(t *testing.T, srv *broker.Server, dashCreds creds, gwCreds [4]creds) {
	const (
		devices = 300
		gws     = 4
		pings   = 20
		tick    = 100 * time.Millisecond
	)
	dash := mustDial5(t, srv.MQTTAddr(), "gw-dashboard", dashCreds)
	var (
		mu   sync.Mutex
		got  = map[string][]string{}
		full = map[string][]string{}
		n    int
		done = make(chan struct{})
	)
	go func() {
		for {
			select {
			case m := <-dash.Msgs:
				tr := decodeTransition(t, "geofence", m)
				mu.Lock()
				got[tr.Device] = append(got[tr.Device], tr.Type+" "+tr.Fence)
				full[tr.Device] = append(full[tr.Device], fmt.Sprintf("%s ts=%d historic=%v", tr.Type, tr.Ts, tr.Historic))
				if n++; n == devices*4 {
					close(done)
				}
				mu.Unlock()
			case <-done:
				return
			case <-dash.Paho.Done():
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if _, err := dash.Paho.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "geofence/#", QoS: 1}}}); err != nil {
		t.Fatalf("dashboard subscribe: %v", err)
	}
	gateways := make([]*client5, gws)
	for g := range gateways {
		gateways[g] = mustDial5(t, srv.MQTTAddr(), fmt.Sprintf("gateway-%d", g), gwCreds[g])
	}
	var wg sync.WaitGroup
	var sendErr atomic.Value
	start := time.Now()
	for g, gw := range gateways {
		wg.Go(func() {
			// A device stamps a fix when it takes it, on a clock a minute
			// behind the server's. Stamps that lag a stalled sender's
			// wall clock would look to the engine like a clock stepping
			// (clock.md), which is not what is tested here.
			last := make([]int64, devices)
			for k := range pings {
				time.Sleep(time.Until(start.Add(time.Duration(k) * tick)))
				lat, lon := outLat, outLon
				if k/4%2 == 1 {
					lat, lon = museumLat, museumLon
				}
				for d := g; d < devices; d += gws {
					ctx, cancel := context.WithTimeout(context.Background(), wait)
					last[d] = max(last[d]+1, nowMs()-60_000)
					_, err := gw.Paho.Publish(ctx, &paho.Publish{Topic: fmt.Sprintf("devices/gw-dev-%d/telemetry", d), QoS: 0,
						Payload: canonical(lat, lon, last[d])})
					cancel()
					if err != nil {
						sendErr.Store(fmt.Errorf("gateway %d, device %d, ping %d: %w", g, d, k, err))
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if err := sendErr.Load(); err != nil {
		t.Fatal(err)
	}
	// Every transition must come; on a machine stalled under load, pings
	// that waited in the server look delayed and the engine may gather a
	// device's last ones for up to 8 × the history wait (24 s at the
	// defaults) while it tells a backward clock step from delay
	// (clock.md), so the wait covers that rather than the usual second.
	select {
	case <-done:
	case <-time.After(8*engine.DefaultHistoryWait + 2*wait):
	}
	want := []string{"ENTER zone-museumsinsel", "EXIT zone-museumsinsel", "ENTER zone-museumsinsel", "EXIT zone-museumsinsel"}
	mu.Lock()
	defer mu.Unlock()
	bad := 0
	for d := range devices {
		dev := fmt.Sprintf("gw-dev-%d", d)
		if !slices.Equal(got[dev], want) {
			if bad++; bad <= 5 {
				t.Errorf("%s: transitions %q, want %q", dev, full[dev], want)
			}
		}
	}
	if bad > 0 || n != devices*4 {
		t.Errorf("%d of %d devices wrong; %d transitions received, want %d (QoS 0 pings shed by a full engine queue, not the rate limit: %v)",
			bad, devices, n, devices*4, metric(t, srv, `edgefence_shed_total{stage="queue"}`))
	}
	if v := rateLimitedTotal(t, srv); v != 0 {
		t.Errorf("edgefence_rate_limited_total = %v, want 0", v)
	}
	for g, gw := range gateways {
		select {
		case <-gw.Paho.Done():
			t.Errorf("gateway %d was disconnected", g)
		default:
		}
	}
}

// 50 clients logging in with wrong passwords, over and over, against an
// Argon2id users file: a failed login costs one hash (counted), the flood
// is answered with 0x86 bad password, 0x89 server busy or 0x9F connection
// rate exceeded, and a device that is already connected keeps getting its
// transitions while it lasts.
func TestBogusLoginFloodDoesNotStallADevice(t *testing.T) {
	cfg := testConfig(t)
	cfg.DataDir = ""
	cfg.Auth = writeUsers(t, testUser{name: "truck-1", role: "device", readOwn: true}, testUser{name: "victim", role: "device"})
	srv := start(t, cfg)
	addr := srv.MQTTAddr()

	// One bogus login, alone: one verification.
	verified := metric(t, srv, "edgefence_password_verifications_total")
	if _, ca, err := dialMQTT5(t, dialTCP(t, addr), "bogus", creds{"victim", "wrong"}); err == nil || ca == nil || ca.ReasonCode != 0x86 {
		t.Fatalf("bogus login: %v (%+v), want CONNACK 0x86", err, ca)
	}
	if v := metric(t, srv, "edgefence_password_verifications_total") - verified; v != 1 {
		t.Errorf("a failed login ran %v password verifications, want 1", v)
	}

	dev := mustDial5(t, addr, "truck-1", login("truck-1"))
	dev.Subscribe("geofence/+/truck-1")

	// The flood: 50 clients, each logging in again as soon as it is
	// answered, until the device is done (bounded).
	stop := make(chan struct{})
	var codes sync.Map // reason code -> *atomic.Int64
	var flood sync.WaitGroup
	for i := range 50 {
		flood.Go(func() {
			for n := 0; n < 200; n++ {
				select {
				case <-stop:
					return
				default:
				}
				_, ca, err := dialMQTT5(t, dialTCP(t, addr), "bogus", creds{"victim", fmt.Sprint("guess-", i, "-", n)})
				rc := -1
				if ca != nil {
					rc = int(ca.ReasonCode)
				} else if err == nil {
					rc = 0
				}
				c, _ := codes.LoadOrStore(rc, new(atomic.Int64))
				c.(*atomic.Int64).Add(1)
			}
		})
	}
	var lat []time.Duration
	base := nowMs() - 60_000
	for k := range 6 {
		lat0, lon0 := museumLat, museumLon
		want := "ENTER zone-museumsinsel truck-1"
		if k%2 == 1 {
			lat0, lon0, want = outLat, outLon, "EXIT zone-museumsinsel truck-1"
		}
		t0 := time.Now()
		dev.ping("truck-1", lat0, lon0, base+int64(k)*1000)
		expectTransitions(t, dev, want)
		lat = append(lat, time.Since(t0))
	}
	close(stop)
	flood.Wait()
	var summary []string
	codes.Range(func(k, v any) bool {
		rc, n := k.(int), v.(*atomic.Int64).Load()
		summary = append(summary, fmt.Sprintf("%#x×%d", rc, n))
		switch rc {
		case 0x86, 0x89, 0x9f:
		default:
			t.Errorf("bogus login answered %#x (%d times), want 0x86, 0x89 or 0x9F", rc, n)
		}
		return true
	})
	t.Logf("device ping → transition latencies during the flood %v; bogus logins answered %v; %v verifications",
		lat, summary, metric(t, srv, "edgefence_password_verifications_total"))
}

// The rate limit and the login bounds hold on every listener alike: a
// device's allowance spent over MQTT/TCP is not renewed by reconnecting
// over MQTTS or secure WebSocket, and a bad login costs one verification
// and gets 0x86 on each.
func TestLimitsFollowTheDeviceOnEveryListener(t *testing.T) {
	srv, listeners := everyListener(t, func(c *broker.Config) { c.PublishRate, c.PublishBurst = 0.001, 3 })
	topic := "devices/truck-1/telemetry"
	var codes []byte
	for i, ln := range listeners {
		cl, ca, err := session5(t, ln.dial(t), "truck-1-"+ln.name, login("truck-1"), true, 0)
		if err != nil {
			t.Fatalf("%s: truck-1 connects: %v (%+v)", ln.name, err, ca)
		}
		for j := range 2 {
			codes = append(codes, publishRC(t, cl, topic, canonical(outLat, outLon, nowMs()-60_000+int64(10*i+j))))
		}
		_ = cl.Paho.Disconnect(&paho.Disconnect{})

		before := metric(t, srv, `edgefence_password_verifications_total`)
		bad := login("truck-2")
		bad.pass = "not-the-password"
		if _, ca, err := session5(t, ln.dial(t), "bad-"+ln.name, bad, true, 0); err == nil || ca == nil || ca.ReasonCode != 0x86 {
			t.Errorf("%s: a bad password: CONNACK %+v (%v), want 0x86", ln.name, ca, err)
		}
		if n := metric(t, srv, `edgefence_password_verifications_total`) - before; n != 1 {
			t.Errorf("%s: a bad login cost %v verifications, want 1", ln.name, n)
		}
	}
	want := []byte{0, 0, 0, 0x97, 0x97, 0x97}
	if !slices.Equal(codes, want) {
		t.Errorf("PUBACK reason codes over tcp, mqtts, wss: %x, want %x (a burst of 3, then quota exceeded on the other listeners)", codes, want)
	}
}
