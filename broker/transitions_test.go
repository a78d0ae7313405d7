package broker_test

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A tracker's pings reach the broker out of order (a retransmission
// overtakes, two network paths race). Within the hold, the broker orders
// them by the device's stamps, so a dashboard sees the truth: one ENTER,
// one EXIT, and not the EXIT-ENTER flicker arrival order would invent.
func TestOutOfOrderPingsWithinHoldYieldNoPhantomTransitions(t *testing.T) {
	cfg := testConfig(t)
	cfg.Engine.Hold = time.Second // the three pings must arrive within it, even on a loaded CI machine
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker")

	t0 := nowMs() - 10_000
	tracker.ping("van-7", museumLat, museumLon, t0)      // inside
	tracker.ping("van-7", outLat, outLon, t0+1100)       // outside, stamped later
	tracker.ping("van-7", museumLat, museumLon, t0+1000) // inside, stamped earlier, arrives last

	got := expectTransitions(t, dash,
		"ENTER zone-museumsinsel van-7",
		"EXIT zone-museumsinsel van-7")
	if got[0].Ts != t0 || got[1].Ts != t0+1100 {
		t.Errorf("event times %d, %d; want the stamps %d, %d", got[0].Ts, got[1].Ts, t0, t0+1100)
	}
	for _, tr := range got {
		if !tr.retained {
			t.Errorf("%s was not retained", tr)
		}
		if tr.Reversal {
			t.Errorf("%s flagged as a reversal", tr)
		}
		if *tr.Clamped {
			t.Errorf("%s clamped (%s), want the device's stamp", tr, tr.ClampReason)
		}
	}
	if got[0].Lat != museumLat || got[0].Lon != museumLon || got[1].Lat != outLat || got[1].Lon != outLon {
		t.Errorf("positions %v,%v / %v,%v are not those of the causing pings", got[0].Lat, got[0].Lon, got[1].Lat, got[1].Lon)
	}

	// Nothing else was decided for van-7: its next transition is the one a
	// later ping causes, with no phantom ENTER before it.
	tracker.ping("van-7", alexLat, alexLon, t0+5000)
	expectTransitions(t, dash, "ENTER customer-alex van-7")

	if v := metric(t, srv, `edgefence_transition_reversals_total`); v != 0 {
		t.Errorf("edgefence_transition_reversals_total = %v, want 0", v)
	}
}

// The same pings with the hold off (--hold 0, arrival order) do invent
// the flicker: the baseline the reorder buffer exists to beat, and proof
// that the test above can fail.
func TestArrivalOrderWithoutHoldInventsPhantomTransitions(t *testing.T) {
	cfg := testConfig(t)
	cfg.Engine.Hold = 0
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker")

	t0 := nowMs() - 10_000
	tracker.ping("van-7", museumLat, museumLon, t0)
	tracker.ping("van-7", outLat, outLon, t0+1100)
	tracker.ping("van-7", museumLat, museumLon, t0+1000)
	got := expectTransitions(t, dash,
		"ENTER zone-museumsinsel van-7",
		"EXIT zone-museumsinsel van-7",
		"ENTER zone-museumsinsel van-7")
	if !got[2].Reversal {
		t.Errorf("%s not flagged as a reversal", got[2])
	}
}

// A cold-booted tracker stamps its fixes 1970-01-01. The broker does not
// let that stamp order anything: it uses its own clock and says so.
func TestEpochZeroStampIsClampedToServerTime(t *testing.T) {
	srv := start(t, testConfig(t))
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker")

	before := time.Now()
	tracker.ping("cold-1", museumLat, museumLon, 0)
	after := time.Now()

	tr := expectTransitions(t, dash, "ENTER zone-museumsinsel cold-1")[0]
	if tr.Clamped == nil || !*tr.Clamped || tr.ClampReason != "before_floor" {
		t.Errorf("clamped=%v clamp_reason=%q, want true, before_floor", tr.Clamped, tr.ClampReason)
	}
	if et := time.UnixMilli(tr.Ts); et.Before(before.Add(-time.Millisecond)) || et.After(after.Add(time.Millisecond)) {
		t.Errorf("event time %v, want the server's ingest time in [%v, %v]", et, before, after)
	}
	if v := metric(t, srv, `edgefence_clamped_total{reason="before_floor"}`); v != 1 {
		t.Errorf(`edgefence_clamped_total{reason="before_floor"} = %v, want 1`, v)
	}
}

// latePayload is the documented payload of <late-topic>/<device>.
type latePayload struct {
	Device    string  `json:"device"`
	Lat       float64 `json:"lat"`
	Lon       float64 `json:"lon"`
	Ts        int64   `json:"ts"`
	Reason    string  `json:"reason"`
	Watermark int64   `json:"watermark"`
}

// A ping stamped further behind the device's latest than the hold cannot
// be placed in committed history: it goes to the late topic, with why and
// the watermark it fell behind, and changes no state.
func TestLatePingGoesToLateTopicAndCausesNoTransition(t *testing.T) {
	cfg := testConfig(t)
	cfg.Engine.History = 0 // late pings go to the late topic as they come
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#", "edgefence/late/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker")

	t0 := nowMs() - 30_000
	tracker.ping("bike-3", museumLat, museumLon, t0)
	expectTransitions(t, dash, "ENTER zone-museumsinsel bike-3")

	// 2 s behind the committed ENTER (hold 100 ms), and somewhere else.
	tracker.ping("bike-3", alexLat, alexLon, t0-2000)
	m := dash.Next("late ping on edgefence/late/bike-3")
	if m.Topic != "edgefence/late/bike-3" {
		t.Fatalf("got %s %s, want the late ping on edgefence/late/bike-3", m.Topic, m.Payload)
	}
	if m.Retain {
		t.Errorf("late ping was retained")
	}
	var late latePayload
	if err := json.Unmarshal(m.Payload, &late); err != nil {
		t.Fatalf("late payload: %v: %s", err, m.Payload)
	}
	if late.Device != "bike-3" || late.Ts != t0-2000 || late.Lat != alexLat || late.Lon != alexLon {
		t.Errorf("late payload %s does not describe the late ping", m.Payload)
	}
	if late.Reason != "behind_watermark" || late.Watermark != t0 {
		t.Errorf("late reason %q watermark %d, want behind_watermark %d: %s", late.Reason, late.Watermark, t0, m.Payload)
	}

	// The late ping moved nothing: the next transition is the EXIT of a
	// later ping, not an EXIT/ENTER from the late one.
	tracker.ping("bike-3", outLat, outLon, t0+1000)
	tr := expectTransitions(t, dash, "EXIT zone-museumsinsel bike-3")[0]
	if tr.Ts != t0+1000 {
		t.Errorf("EXIT at %d, want the later ping's %d", tr.Ts, t0+1000)
	}
	if v := metric(t, srv, `edgefence_late_total`); v != 1 {
		t.Errorf("edgefence_late_total = %v, want 1", v)
	}
}

// A late ping that falls between two committed pings of a device reveals
// an EXIT and ENTER the live path never saw: a dashboard gets them, in
// event order, flagged historic and not retained, and one that subscribes
// afterwards still gets only the device's current state.
func TestLatePingRevealsHistoricTransitionsThatAreNotRetained(t *testing.T) {
	srv := start(t, testConfig(t)) // hold 100 ms, history on (the default)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#", "edgefence/late/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker")

	t0 := nowMs() - 30_000
	tracker.ping("bike-4", museumLat, museumLon, t0)
	enter := expectTransitions(t, dash, "ENTER zone-museumsinsel bike-4")[0]
	tracker.ping("bike-4", museumLat, museumLon, t0+2000)
	for deadline := time.Now().Add(wait); metric(t, srv, `edgefence_released_total`) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second ping was not committed")
		}
	}

	// Between the two, outside: late, and placed into the device's history.
	tracker.ping("bike-4", outLat, outLon, t0+1000)
	got := expectTransitions(t, dash, "EXIT zone-museumsinsel bike-4", "ENTER zone-museumsinsel bike-4")
	for i, want := range []int64{t0 + 1000, t0 + 2000} {
		if tr := got[i]; !tr.Historic || tr.retained || tr.Ts != want {
			t.Errorf("%s: historic %v, retained %v; want historic, not retained, ts %d", tr, tr.Historic, tr.retained, want)
		}
	}
	if v := metric(t, srv, `edgefence_late_total`); v != 0 {
		t.Errorf("edgefence_late_total = %v, want 0: the ping was reconciled", v)
	}

	later := connect5(t, srv.MQTTAddr(), "later")
	later.Subscribe("geofence/+/bike-4")
	retained := later.Sync()
	if len(retained) != 1 {
		t.Fatalf("a later dashboard got %d retained messages, want the current state only", len(retained))
	}
	if tr := decodeTransition(t, "geofence", retained[0]); tr.short() != enter.short() || tr.Ts != enter.Ts || tr.Historic {
		t.Errorf("a later dashboard got %s (historic %v), want the live %s", tr, tr.Historic, enter)
	}
}

// A van parks in a fence with a 1 s dwell and its tracker goes quiet: the
// broker still reports DWELL, from the device's estimated clock.
func TestDwellFiresForSilentParkedDevice(t *testing.T) {
	cfg := testConfig(t)
	cfg.Fences = writeFences(t, `{"type":"Feature","id":"yard","properties":{"dwell":1},
		"geometry":{"type":"Polygon","coordinates":[[[13.39,52.51],[13.41,52.51],[13.41,52.53],[13.39,52.53],[13.39,52.51]]]}}`)
	cfg.Engine.Sweep = 50 * time.Millisecond
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker")

	t0 := nowMs()
	tracker.ping("van-9", museumLat, museumLon, t0)
	got := expectTransitions(t, dash, "ENTER yard van-9", "DWELL yard van-9")
	dw := got[1]
	if dw.Ts != t0+1000 {
		t.Errorf("DWELL at %d, want ENTER + dwell = %d", dw.Ts, t0+1000)
	}
	if !dw.Timer || !dw.retained {
		t.Errorf("DWELL timer=%v retained=%v, want both", dw.Timer, dw.retained)
	}
	if math.Abs(dw.Lat-museumLat) > 1e-5 || math.Abs(dw.Lon-museumLon) > 1e-5 { // kept as float32 while silent
		t.Errorf("DWELL at %v,%v, want the parked position", dw.Lat, dw.Lon)
	}
}

// A dashboard that connects after the fact learns where every truck is
// from the retained transitions, by device or by fence.
func TestLateDashboardGetsRetainedState(t *testing.T) {
	srv := start(t, testConfig(t))
	live := connect5(t, srv.MQTTAddr(), "live")
	live.Subscribe("geofence/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	t0 := nowMs() - 10_000
	tracker.ping("truck-1", museumLat, museumLon, t0)
	tracker.ping("truck-2", museumLat, museumLon, t0)
	tracker.ping("truck-3", alexLat, alexLon, t0)
	seen := map[string]bool{}
	for range 3 {
		seen[nextTransition(t, live, "three ENTERs").short()] = true
	}
	for _, w := range []string{"ENTER zone-museumsinsel truck-1", "ENTER zone-museumsinsel truck-2", "ENTER customer-alex truck-3"} {
		if !seen[w] {
			t.Fatalf("live subscriber saw %v, missing %s", seen, w)
		}
	}

	byDevice := connect5(t, srv.MQTTAddr(), "by-device")
	byDevice.Subscribe("geofence/+/truck-1")
	got := byDevice.Sync()
	if len(got) != 1 {
		t.Fatalf("geofence/+/truck-1 got %d retained messages, want 1", len(got))
	}
	if tr := decodeTransition(t, "geofence", got[0]); tr.short() != "ENTER zone-museumsinsel truck-1" || !tr.retained || tr.Ts != t0 {
		t.Errorf("geofence/+/truck-1 got %s retained=%v", tr, tr.retained)
	}

	byFence := connect5(t, srv.MQTTAddr(), "by-fence")
	byFence.Subscribe("geofence/zone-museumsinsel/+")
	got = byFence.Sync()
	devices := map[string]bool{}
	for _, m := range got {
		tr := decodeTransition(t, "geofence", m)
		if tr.Type != "ENTER" || !tr.retained {
			t.Errorf("geofence/zone-museumsinsel/+ got %s retained=%v", tr, tr.retained)
		}
		devices[tr.Device] = true
	}
	if len(got) != 2 || !devices["truck-1"] || !devices["truck-2"] {
		t.Errorf("geofence/zone-museumsinsel/+ got devices %v from %d messages, want truck-1 and truck-2", devices, len(got))
	}
}

// OwnTracks phones publish on owntracks/<user>/<device>; the device id is
// <user>-<device>. Non-location messages (transition, lwt) are routed like
// any MQTT message but are neither evaluated nor rejected.
func TestOwnTracksLocationsProduceTransitions(t *testing.T) {
	srv := start(t, testConfig(t))
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	watch := connect5(t, srv.MQTTAddr(), "owntracks-watch")
	watch.Subscribe("owntracks/#", "edgefence/rejected/#")
	phone := connect5(t, srv.MQTTAddr(), "phone")

	tst := time.Now().Unix() - 60
	loc := []byte(`{"_type":"location","lat":52.52,"lon":13.40,"tst":` + itoa(tst) + `,"acc":12,"tid":"ph"}`)
	if rc := phone.Publish("owntracks/alice/phone", 1, loc); rc != 0 {
		t.Fatalf("location: PUBACK %#x", rc)
	}
	tr := expectTransitions(t, dash, "ENTER zone-museumsinsel alice-phone")[0]
	if tr.Ts != tst*1000 {
		t.Errorf("ENTER at %d, want tst %d s", tr.Ts, tst)
	}

	others := [][]byte{
		[]byte(`{"_type":"transition","event":"enter","desc":"home","lat":52.50,"lon":13.30,"tst":` + itoa(tst+1) + `,"wtst":1,"acc":5}`),
		[]byte(`{"_type":"lwt","tst":` + itoa(tst+2) + `}`),
	}
	for _, p := range others {
		if rc := phone.Publish("owntracks/alice/phone", 1, p); rc != 0 {
			t.Fatalf("%s: PUBACK %#x, want success", p, rc)
		}
	}
	// Routed, in order, with nothing rejected in between.
	phone.flush()
	got := watch.Sync()
	if len(got) != 3 || string(got[1].Payload) != string(others[0]) || string(got[2].Payload) != string(others[1]) {
		var topics []string
		for _, m := range got {
			topics = append(topics, m.Topic+" "+string(m.Payload))
		}
		t.Fatalf("owntracks subscriber got %q, want the location, transition and lwt messages", topics)
	}

	// The transition message (outside every fence) decided nothing: the
	// next transition is the EXIT of the next location.
	out := []byte(`{"_type":"location","lat":52.50,"lon":13.30,"tst":` + itoa(tst+3) + `}`)
	if rc := phone.Publish("owntracks/alice/phone", 1, out); rc != 0 {
		t.Fatalf("location: PUBACK %#x", rc)
	}
	tr = expectTransitions(t, dash, "EXIT zone-museumsinsel alice-phone")[0]
	if tr.Ts != (tst+3)*1000 {
		t.Errorf("EXIT at %d, want %d", tr.Ts, (tst+3)*1000)
	}
	if v := metric(t, srv, `edgefence_pings_ignored_total`); v != 2 {
		t.Errorf("edgefence_pings_ignored_total = %v, want 2", v)
	}
	var rejected float64
	for k, v := range metrics(t, srv) {
		if strings.HasPrefix(k, "edgefence_rejected_total{") {
			rejected += v
		}
	}
	if rejected != 0 {
		t.Errorf("edgefence_rejected_total sums to %v, want 0", rejected)
	}
}

// An EXIT only says "outside", which no message says too: it is retained
// with an MQTT 5 message expiry (default 24 h) so that the retained set
// stays bounded. ENTER and DWELL do not expire.
func TestExitCarriesMessageExpiry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		expiry time.Duration
	}{
		{"default 24h", 0},
		{"configured 1h", time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			want := uint32(24 * 3600)
			if tc.expiry != 0 {
				cfg.ExitExpiry = tc.expiry
				want = uint32(tc.expiry / time.Second)
			}
			srv := start(t, cfg)
			dash := connect5(t, srv.MQTTAddr(), "dashboard")
			dash.Subscribe("geofence/#")
			tracker := connect5(t, srv.MQTTAddr(), "tracker")
			t0 := nowMs() - 10_000
			tracker.ping("car-5", museumLat, museumLon, t0)
			tracker.ping("car-5", outLat, outLon, t0+1000)
			got := expectTransitions(t, dash, "ENTER zone-museumsinsel car-5", "EXIT zone-museumsinsel car-5")
			if got[0].expiry != nil {
				t.Errorf("ENTER has message expiry %d, want none", *got[0].expiry)
			}
			checkExpiry := func(what string, tr transition) {
				t.Helper()
				// The broker counts down in whole seconds: allow a few.
				if tr.expiry == nil || *tr.expiry > want || *tr.expiry < want-5 {
					t.Errorf("%s: message expiry %v, want about %d s", what, tr.expiry, want)
				}
			}
			checkExpiry("live EXIT", got[1])

			later := connect5(t, srv.MQTTAddr(), "later")
			later.Subscribe("geofence/+/car-5")
			ret := later.Sync()
			if len(ret) != 1 {
				t.Fatalf("retained: got %d messages, want the EXIT", len(ret))
			}
			tr := decodeTransition(t, "geofence", ret[0])
			if tr.short() != "EXIT zone-museumsinsel car-5" || !tr.retained {
				t.Fatalf("retained: got %s retained=%v", tr, tr.retained)
			}
			checkExpiry("retained EXIT", tr)
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
