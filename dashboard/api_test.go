package dashboard_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/internal/mqtttest"
)

type deviceView struct {
	ClockOffsetMs  float64 `json:"clock_offset_ms"`
	ClockState     string  `json:"clock_state"`
	WatermarkLagMs float64 `json:"watermark_lag_ms"`
	Buffered       int     `json:"buffered"`
	BufferCap      int     `json:"buffer_cap"`
	HoldMs         float64 `json:"hold_ms"`
	Pending        []struct {
		Event     time.Time `json:"event_time"`
		Clamped   bool      `json:"clamped"`
		ReleaseBy time.Time `json:"release_by"`
	} `json:"pending"`
}

// The introspection endpoint's figures are what the device sent: a clock
// 3 s ahead, four pings waiting out a 5 s hold, and a watermark trailing
// the server's clock by about the hold. The fleet view puts that device
// first by clock offset; an unknown device is 404 (or, as the page asks,
// a 200 that says so).
func TestIntrospectionAgreesWithWhatWasSent(t *testing.T) {
	cfg := testConfig(t)
	cfg.Engine.Hold = 5 * time.Second
	srv := start(t, cfg)
	tracker := mqtttest.Connect(t, srv.MQTTAddr(), "tracker", wait)
	var stamps []time.Time
	before := time.Now()
	for range 4 {
		ts := time.Now().Add(3 * time.Second).Truncate(time.Millisecond)
		stamps = append(stamps, ts)
		tracker.Publish("devices/truck-42/telemetry", 1, ping(outLat, outLon, ts))
		time.Sleep(20 * time.Millisecond)
	}
	tracker.Publish("devices/steady-1/telemetry", 1, ping(outLat, outLon, time.Now()))
	tracker.Sync()

	base := "http://" + srv.HTTPAddr()
	var v deviceView
	if status := getJSON(t, base+"/api/devices/truck-42", &v); status != 200 {
		t.Fatalf("GET /api/devices/truck-42: %d", status)
	}
	// The offset is learned from the freshest ping: 3 s less its transit.
	if v.ClockOffsetMs > 3000 || v.ClockOffsetMs < 2800 || v.ClockState != "locked" {
		t.Errorf("clock offset %.1f ms (%s), want a little under 3000 (locked)", v.ClockOffsetMs, v.ClockState)
	}
	if v.Buffered != 4 || len(v.Pending) != 4 || v.BufferCap != cfg.Engine.BufferCap || v.HoldMs != 5000 {
		t.Fatalf("buffer %d (%d listed) of %d, hold %v ms; want 4 of %d, 5000", v.Buffered, len(v.Pending), v.BufferCap, v.HoldMs, cfg.Engine.BufferCap)
	}
	for i, p := range v.Pending {
		if !p.Event.Equal(stamps[i]) || p.Clamped {
			t.Errorf("pending[%d] at %v (clamped %v), want %v as sent", i, p.Event, p.Clamped, stamps[i])
		}
		// Released when its 5 s hold runs out at the latest.
		if by := p.ReleaseBy.Sub(before.Truncate(time.Millisecond)); by < 5*time.Second || by > 5*time.Second+wait {
			t.Errorf("pending[%d] released by %v after it was sent, want its 5 s hold", i, by)
		}
	}
	if v.WatermarkLagMs < 5000 || v.WatermarkLagMs > 6000 {
		t.Errorf("watermark lag %.0f ms, want about the 5 s hold", v.WatermarkLagMs)
	}

	var fleet struct {
		Devices  int `json:"devices"`
		ByOffset []struct {
			Device string `json:"device"`
		} `json:"by_offset"`
	}
	if status := getJSON(t, base+"/api/fleet", &fleet); status != 200 || fleet.Devices != 2 || len(fleet.ByOffset) == 0 || fleet.ByOffset[0].Device != "truck-42" {
		t.Errorf("fleet: status %d, %+v; want 2 devices, truck-42 first by offset", status, fleet)
	}
	if status := getJSON(t, base+"/api/devices/nobody", nil); status != 404 {
		t.Errorf("an unknown device: %d, want 404", status)
	}
	// The page asks so that a device evicted under its open panel is not
	// an error in the browser's console.
	var missing struct{ Device, Missing string }
	if status := getJSON(t, base+"/api/devices/nobody?missing=200", &missing); status != 200 || missing.Device != "nobody" || !strings.Contains(missing.Missing, "evicted") {
		t.Errorf("an unknown device with ?missing=200: %d %+v, want 200 saying why", status, missing)
	}
}

// Inspecting a device starts keeping its arrivals: the next look lists
// the pings received since, as they came, each with why it was clamped
// (here one sent without a stamp), which the committed history does not
// keep.
func TestIntrospectionListsPingsReceivedSinceTheFirstLook(t *testing.T) {
	srv := start(t, testConfig(t))
	tracker := mqtttest.Connect(t, srv.MQTTAddr(), "tracker", wait)
	tracker.Publish("devices/truck-7/telemetry", 1, ping(outLat, outLon, time.Now()))
	tracker.Sync()

	type received struct {
		Received []struct {
			Clamped     bool    `json:"clamped"`
			ClampReason string  `json:"clamp_reason"`
			Lat         float64 `json:"lat"`
		} `json:"received"`
	}
	base := "http://" + srv.HTTPAddr()
	var first received
	if status := getJSON(t, base+"/api/devices/truck-7", &first); status != 200 || len(first.Received) != 0 {
		t.Fatalf("first look: status %d, %d received; want 200 and none yet", status, len(first.Received))
	}
	sent := time.Now().Truncate(time.Millisecond)
	tracker.Publish("devices/truck-7/telemetry", 1, ping(outLat, outLon, sent))
	tracker.Publish("devices/truck-7/telemetry", 1, []byte(fmt.Sprintf(`{"lat":%v,"lon":%v}`, outLat, outLon)))
	tracker.Sync()

	var next received
	if status := getJSON(t, base+"/api/devices/truck-7", &next); status != 200 {
		t.Fatalf("second look: status %d", status)
	}
	if len(next.Received) != 2 {
		t.Fatalf("second look: %d received, want the 2 pings sent since the first", len(next.Received))
	}
	if r := next.Received[0]; r.Clamped || r.Lat != outLat {
		t.Errorf("received[0] = %+v, want the stamped ping, not clamped", r)
	}
	if r := next.Received[1]; !r.Clamped || r.ClampReason != "missing" {
		t.Errorf("received[1] = %+v, want clamped: missing (sent without ts)", r)
	}
}

// Each fix of a device's history names the rule that decided its fence
// membership, so that a transition that looks wrong can be traced: the
// fix 60 m inside customer-alex by its position, one 4 m outside with an
// accuracy of 5 m by the accuracy margin (which kept customer-alex), and
// a fix 7 km away a second later by the speed gate (set aside).
func TestIntrospectionNamesTheRuleOfEachFix(t *testing.T) {
	cfg := testConfig(t)
	cfg.Engine.MaxSpeed = broker.DefaultConfig().Engine.MaxSpeed
	srv := start(t, cfg)
	tracker := mqtttest.Connect(t, srv.MQTTAddr(), "tracker", wait)
	const alexLat, alexLon, mPerDeg = 52.5219, 13.4132, 111_195.08
	t0 := time.Now().Add(-time.Minute)
	for i, p := range []struct{ north, lon float64 }{{90, alexLon}, {154, alexLon}, {0, outLon}} {
		lat := alexLat + p.north/mPerDeg
		if p.lon == outLon {
			lat = outLat
		}
		ts := t0.Add(time.Duration(i) * time.Second).UnixMilli()
		tracker.Publish("devices/van-9/telemetry", 1, fmt.Appendf(nil, `{"lat":%v,"lon":%v,"ts":%d,"acc":5}`, lat, p.lon, ts))
	}
	tracker.Sync()

	var v struct {
		History []struct {
			Rule     string   `json:"rule"`
			Held     []string `json:"held"`
			Acc      float64  `json:"acc"`
			SetAside bool     `json:"set_aside"`
		} `json:"history"`
	}
	url := "http://" + srv.HTTPAddr() + "/api/devices/van-9"
	for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
		if status := getJSON(t, url, &v); status != 200 {
			t.Fatalf("GET %s: %d", url, status)
		}
		if len(v.History) == 3 || time.Now().After(deadline) {
			break
		}
	}
	got := fmt.Sprintf("%+v", v.History)
	want := "[{Rule:position Held:[] Acc:5 SetAside:false} {Rule:accuracy_margin Held:[customer-alex] Acc:5 SetAside:false} {Rule:speed_gate Held:[] Acc:5 SetAside:true}]"
	if got != want {
		t.Errorf("history %s,\nwant %s", got, want)
	}
}

// The two rules after the margin are named too: a fix clear inside
// customer-alex whose predecessor was clear outside keeps the device out
// (confirmation), and one clear outside from a device that has stood 4 m
// inside the edge for 30 s keeps it in (standing_still, and every fix
// from then on says standing).
func TestIntrospectionNamesConfirmationAndStanding(t *testing.T) {
	srv := start(t, testConfig(t))
	tracker := mqtttest.Connect(t, srv.MQTTAddr(), "tracker", wait)
	const alexLat, alexLon, mPerDeg = 52.5219, 13.4132, 111_195.08
	t0 := time.Now().Add(-time.Minute)
	send := func(dev string, i int, north float64) {
		ts := t0.Add(time.Duration(i) * time.Second).UnixMilli()
		tracker.Publish("devices/"+dev+"/telemetry", 1, fmt.Appendf(nil, `{"lat":%v,"lon":%v,"ts":%d,"acc":5}`, alexLat+north/mPerDeg, alexLon, ts))
	}
	// The edge is 150 m north of the fixes' line's origin: 90 m is 60 m
	// inside, 146 m 4 m inside (within the margin of 1.5 × 5 m), 174 m
	// and 168 m clear outside.
	send("van-7", 0, 174)
	send("van-7", 1, 90)
	send("van-7", 2, 91)
	send("van-6", 0, 90)
	for i := 1; i <= 33; i++ {
		send("van-6", i, 146)
	}
	send("van-6", 34, 168)
	tracker.Sync()

	type fix struct {
		Lat      float64  `json:"lat"`
		Rule     string   `json:"rule"`
		Held     []string `json:"held"`
		Standing bool     `json:"standing"`
	}
	// history polls until the device's last fix is at north (the last
	// sent) and it has n of them.
	history := func(dev string, n int, north float64) []fix {
		var v struct {
			History []fix `json:"history"`
		}
		url := "http://" + srv.HTTPAddr() + "/api/devices/" + dev
		for deadline := time.Now().Add(wait); ; time.Sleep(20 * time.Millisecond) {
			if status := getJSON(t, url, &v); status != 200 {
				t.Fatalf("GET %s: %d", url, status)
			}
			last := len(v.History) - 1
			if last >= n-1 && math.Abs(v.History[last].Lat-(alexLat+north/mPerDeg)) < 1e-6 || time.Now().After(deadline) {
				for i := range v.History {
					v.History[i].Lat = 0 // compared apart
				}
				return v.History
			}
		}
	}
	if got, want := fmt.Sprintf("%+v", history("van-7", 3, 91)), "[{Lat:0 Rule:position Held:[] Standing:false} {Lat:0 Rule:confirmation Held:[customer-alex] Standing:false} {Lat:0 Rule:position Held:[] Standing:false}]"; got != want {
		t.Errorf("van-7's history %s,\nwant %s", got, want)
	}
	h := history("van-6", 16, 168)
	if got, want := fmt.Sprintf("%+v", h[len(h)-1]), "{Lat:0 Rule:standing_still Held:[customer-alex] Standing:true}"; got != want {
		t.Errorf("van-6's last fix %s, want %s", got, want)
	}
	// Its spot starts at its third fix (the first two 56 m apart), so it
	// stands from 30 s later: the last three fixes.
	if !h[len(h)-3].Standing || h[len(h)-4].Standing {
		t.Errorf("van-6 standing from its fix at +32 s on: %+v", h)
	}
}
