package broker_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/edgefence/edgefence/broker"
)

// Trackers behind a gateway, on a few shared connections, stay 3 s in a
// fence with a 4 s dwell; during the stay each one's clock steps once,
// forward by 1.5–2.5 s (a cellular resync, which the clock model's offset
// absorbs) or back by 1–3 s. A stay is measured in true elapsed time, not
// on the stamps: each device gets exactly its true ENTER and EXIT, at the
// stamps of the pings that crossed, and no DWELL. (Measured on the
// stamps, a stay stepped forward looked 4.25 s long or more and got one.)
func TestGatewayDevicesWhoseClocksStepDuringAShortStayGetNoDwell(t *testing.T) {
	const (
		conns    = 3 // the gateway's MQTT connections
		perConn  = 4 // devices carried by each
		devices  = conns * perConn
		step     = 250 * time.Millisecond // between a device's fixes
		before   = 6                      // fixes outside before the stay: the model learns the clock
		inside   = 12                     // fixes inside: 3 s
		after    = 10                     // fixes outside after it
		stepAt   = before + 3             // the first fix on the stepped clock, 750 ms into the stay
		maxDelay = 100                    // ms of network delay at most
		fence    = "bay"
	)
	cfg := testConfig(t)
	cfg.Engine.Hold = broker.DefaultConfig().Engine.Hold // the product's hold, not the helpers' short one
	cfg.Fences = writeFences(t, `{"type":"Feature","id":"bay","properties":{"dwell":4},
		"geometry":{"type":"Polygon","coordinates":[[[13.39,52.51],[13.41,52.51],[13.41,52.53],[13.39,52.53],[13.39,52.51]]]}}`)
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	gateway := make([]*client5, conns)
	for c := range gateway {
		gateway[c] = mustDial5(t, srv.MQTTAddr(), fmt.Sprintf("gateway-%d", c), anonymous)
	}

	// Device g's clock is behind the server's by 0.5–3 s; even devices
	// step forward, odd ones back. Its fix k is taken at origin + g×20 ms
	// + k×step and reaches the broker 0–100 ms later.
	type ping struct {
		device   string
		lat, lon float64
		stamp    int64 // device clock, epoch ms
		send     time.Duration
	}
	rng := rand.New(rand.NewPCG(32, 4))
	origin := time.Now().Add(200 * time.Millisecond)
	sends := make([][]ping, conns)
	want := map[string][]string{}
	clocks := map[string]string{}
	for g := range devices {
		device := fmt.Sprintf("gw-dev-%02d", g)
		offset := -500*time.Millisecond - time.Duration(g)*200*time.Millisecond
		jump := []time.Duration{1500, 2000, 2500}[g/2%3] * time.Millisecond
		if g%2 == 1 {
			jump = -[]time.Duration{1000, 2000, 3000}[g/2%3] * time.Millisecond
		}
		clocks[device] = fmt.Sprintf("clock %v, stepping %+v", offset, jump)
		for k := range before + inside + after {
			fix := time.Duration(g)*20*time.Millisecond + time.Duration(k)*step
			clk := fix + offset
			if k >= stepAt {
				clk += jump
			}
			p := ping{device: device, lat: outLat, lon: outLon, stamp: origin.Add(clk).UnixMilli(),
				send: fix + time.Duration(rng.IntN(maxDelay+1))*time.Millisecond}
			if k >= before && k < before+inside {
				p.lat, p.lon = museumLat, museumLon
			}
			switch k {
			case before:
				want[device] = append(want[device], fmt.Sprintf("ENTER ts=%d", p.stamp))
			case before + inside:
				want[device] = append(want[device], fmt.Sprintf("EXIT ts=%d", p.stamp))
			}
			sends[g%conns] = append(sends[g%conns], p)
		}
	}

	var wg sync.WaitGroup
	for c, pings := range sends {
		slices.SortStableFunc(pings, func(a, b ping) int { return int(a.send - b.send) })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range pings {
				time.Sleep(time.Until(origin.Add(p.send)))
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				pr, err := gateway[c].Paho.Publish(ctx, &paho.Publish{
					Topic: "devices/" + p.device + "/telemetry", QoS: 1,
					Payload: canonical(p.lat, p.lon, p.stamp),
				})
				cancel()
				if err != nil || pr == nil || pr.ReasonCode != 0 {
					t.Errorf("gateway-%d: ping of %s at %d: %v %+v", c, p.device, p.stamp, err, pr)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	// Collect until every expected transition has come and then none for
	// the dwell and a second more (a DWELL would have come by then), or
	// for 15 s at most.
	total := devices * 2
	got := map[string][]string{}
	n := 0
	deadline := time.After(15 * time.Second)
collect:
	for {
		var quiet <-chan time.Time
		if n >= total {
			quiet = time.After(5 * time.Second)
		}
		select {
		case m := <-dash.Msgs:
			tr := decodeTransition(t, "geofence", m)
			s := fmt.Sprintf("%s ts=%d", tr.Type, tr.Ts)
			if tr.Fence != fence || tr.Clamped == nil || *tr.Clamped {
				s += fmt.Sprintf(" (fence %s, clamped %v)", tr.Fence, tr.Clamped)
			}
			got[tr.Device] = append(got[tr.Device], s)
			n++
		case <-quiet:
			break collect
		case <-deadline:
			break collect
		}
	}
	bad := 0
	for g := range devices {
		device := fmt.Sprintf("gw-dev-%02d", g)
		if slices.Equal(got[device], want[device]) {
			continue
		}
		bad++
		t.Errorf("%s (%s) got:\n\t%s\nwant:\n\t%s", device, clocks[device],
			strings.Join(got[device], "\n\t"), strings.Join(want[device], "\n\t"))
	}
	if bad > 0 {
		t.Errorf("%d of %d devices got wrong transitions; %d transitions in all, want %d", bad, devices, n, total)
	}
}
