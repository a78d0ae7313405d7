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

// A gateway forwards many trackers over a few connections; their clocks run
// up to 3 s ahead or behind and the network reorders their pings by up to
// 350 ms. This guards that a dashboard still sees exactly each device's true
// ENTER/EXIT transitions, stamped with the device's own time of the ping
// that crossed, unclamped.
func TestGatewayDevicesWithClockOffsetsGetTrueTransitions(t *testing.T) {
	const (
		conns       = 4  // the gateway's MQTT connections
		perConn     = 10 // devices carried by each
		devices     = conns * perConn
		pingsPerLeg = 3
		step        = 150 * time.Millisecond // between a device's fixes
		maxDelay    = 350                    // ms of network delay at most
		fence       = "zone-museumsinsel"
	)
	legs := []bool{false, true, false, true, false} // inside the fence?
	// Each ping of a leg at its own position, so a transition's position
	// names the ping that crossed.
	inLat := [pingsPerLeg]float64{52.5200, 52.5201, 52.5202}  // museumLon: inside only zone-museumsinsel
	outLon := [pingsPerLeg]float64{13.3000, 13.3010, 13.3020} // outLat: inside no fence

	cfg := testConfig(t)
	cfg.Engine.Hold = broker.DefaultConfig().Engine.Hold // the product's hold, not the helpers' short one
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	gateway := make([]*client5, conns)
	for c := range gateway {
		gateway[c] = mustDial5(t, srv.MQTTAddr(), fmt.Sprintf("gateway-%d", c), anonymous) // publish-only, like a gateway
	}

	// The plan: device g rides connection g%conns with a clock offset of
	// -3 s + g×150 ms; its fix k is taken at origin + g×7 ms + k×step,
	// stamped with its clock, and reaches the broker after a delay of
	// 0–350 ms, so some pings overtake their device's earlier ones.
	type ping struct {
		device   string
		lat, lon float64
		stamp    int64         // device clock, epoch ms
		fix      time.Duration // when the fix was taken, after origin
		send     time.Duration // when the gateway forwards it, after origin
	}
	type crossing struct {
		typ      string
		stamp    int64
		lat, lon float64
	}
	rng := rand.New(rand.NewPCG(7, 42))
	origin := time.Now().Add(200 * time.Millisecond)
	sends := make([][]ping, conns)
	want := map[string][]crossing{}
	overtaken := 0 // crossing pings a later ping of the same device overtakes
	for g := range devices {
		device := fmt.Sprintf("gw-dev-%02d", g)
		offset := -3*time.Second + time.Duration(g)*150*time.Millisecond
		var pings []ping
		for l, inside := range legs {
			for k := range pingsPerLeg {
				fix := time.Duration(g)*7*time.Millisecond + time.Duration(l*pingsPerLeg+k)*step
				p := ping{
					device: device,
					lat:    outLat, lon: outLon[k],
					stamp: origin.Add(fix + offset).UnixMilli(),
					fix:   fix,
					send:  fix + time.Duration(rng.IntN(maxDelay+1))*time.Millisecond,
				}
				if inside {
					p.lat, p.lon = inLat[k], museumLon
				}
				if k == 0 && l > 0 {
					typ := "EXIT"
					if inside {
						typ = "ENTER"
					}
					want[device] = append(want[device], crossing{typ, p.stamp, p.lat, p.lon})
				}
				pings = append(pings, p)
			}
		}
		for i, p := range pings {
			if i%pingsPerLeg == 0 && i > 0 && slices.ContainsFunc(pings[i+1:], func(q ping) bool { return q.send < p.send }) {
				overtaken++
			}
		}
		sends[g%conns] = append(sends[g%conns], pings...)
	}
	if overtaken == 0 {
		t.Fatal("the plan reorders no crossing ping: the test would not test reordering")
	}

	// Each connection forwards its devices' pings in the order they reach
	// the gateway.
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

	// Collect transitions until every one expected has come and then none
	// for a second more (so that extra ones show), or for 10 s at most.
	total := devices * (len(legs) - 1)
	got := map[string][]transition{}
	n := 0
	deadline := time.After(10 * time.Second)
collect:
	for {
		var quiet <-chan time.Time
		if n >= total {
			quiet = time.After(time.Second)
		}
		select {
		case m := <-dash.Msgs:
			tr := decodeTransition(t, "geofence", m)
			got[tr.Device] = append(got[tr.Device], tr)
			n++
		case <-quiet:
			break collect
		case <-deadline:
			break collect
		}
	}

	// Every device: exactly ENTER, EXIT, ENTER, EXIT in its fence, each at
	// the stamp and position of the ping that crossed, none clamped.
	bad := 0
	for g := range devices {
		device := fmt.Sprintf("gw-dev-%02d", g)
		offset := -3*time.Second + time.Duration(g)*150*time.Millisecond
		ok := len(got[device]) == len(want[device])
		for i := 0; ok && i < len(want[device]); i++ {
			tr, w := got[device][i], want[device][i]
			ok = tr.Type == w.typ && tr.Fence == fence && tr.Ts == w.stamp &&
				tr.Lat == w.lat && tr.Lon == w.lon && tr.Clamped != nil && !*tr.Clamped
		}
		if ok {
			continue
		}
		bad++
		var gs, ws []string
		for _, tr := range got[device] {
			s := fmt.Sprintf("%s %s ts=%d", tr.Type, tr.Fence, tr.Ts)
			if tr.Clamped != nil && *tr.Clamped {
				s += " clamped(" + tr.ClampReason + ")"
			}
			if tr.Reversal {
				s += " reversal"
			}
			gs = append(gs, s)
		}
		for _, w := range want[device] {
			ws = append(ws, fmt.Sprintf("%s %s ts=%d", w.typ, fence, w.stamp))
		}
		t.Errorf("%s (clock %+v) got %d transitions:\n\t%s\nwant:\n\t%s", device, offset, len(got[device]),
			strings.Join(gs, "\n\t"), strings.Join(ws, "\n\t"))
	}
	for device, trs := range got {
		if _, ok := want[device]; !ok {
			t.Errorf("transitions for unknown device %s: %v", device, trs)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d devices got wrong transitions; %d transitions in all, want %d", bad, devices, n, total)
	}
}
