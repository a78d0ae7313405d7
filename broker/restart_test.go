package broker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/broker"
)

// A broker restart (upgrade, crash recovery) must not re-announce what
// dashboards already know, and must still notice what changed while it
// was down: state is rebuilt from the retained transitions in the store.
func TestRestartKeepsFenceState(t *testing.T) {
	cfg := testConfig(t)
	t0 := nowMs() - 60_000

	first := start(t, cfg)
	dash := connect5(t, first.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect5(t, first.MQTTAddr(), "tracker")
	tracker.ping("truck-1", museumLat, museumLon, t0)
	tracker.ping("truck-2", alexLat, alexLon, t0)
	seen := map[string]bool{}
	for range 2 {
		seen[nextTransition(t, dash, "two ENTERs").short()] = true
	}
	if !seen["ENTER zone-museumsinsel truck-1"] || !seen["ENTER customer-alex truck-2"] {
		t.Fatalf("first run: got %v", seen)
	}
	closeServer(t, first)

	second := start(t, cfg)
	if second.MQTTAddr() == "" {
		t.Fatal("no MQTT address after restart")
	}
	dash = connect5(t, second.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	retained := map[string]bool{}
	for _, m := range dash.Sync() {
		tr := decodeTransition(t, "geofence", m)
		if !tr.retained || tr.Ts != t0 {
			t.Errorf("after restart: %s retained=%v, want the retained ENTER at %d", tr, tr.retained, t0)
		}
		retained[tr.short()] = true
	}
	if len(retained) != 2 || !retained["ENTER zone-museumsinsel truck-1"] || !retained["ENTER customer-alex truck-2"] {
		t.Fatalf("retained after restart: %v", retained)
	}

	tracker = connect5(t, second.MQTTAddr(), "tracker")
	// truck-1 is still inside: no second ENTER. Its next transition is
	// the EXIT of its next ping.
	tracker.ping("truck-1", museumLat, museumLon, t0+1000)
	tracker.ping("truck-1", outLat, outLon, t0+2000)
	tr := expectTransitions(t, dash, "EXIT zone-museumsinsel truck-1")[0]
	if tr.Ts != t0+2000 {
		t.Errorf("truck-1 EXIT at %d, want %d", tr.Ts, t0+2000)
	}
	// truck-2 left customer-alex while the broker was down (its pings
	// were lost): its next ping, from the museum, reads as EXIT then ENTER.
	tracker.ping("truck-2", museumLat, museumLon, t0+3000)
	expectTransitions(t, dash, "EXIT customer-alex truck-2", "ENTER zone-museumsinsel truck-2")
	if v := metric(t, second, `edgefence_transitions_total{type="ENTER"}`); v != 1 {
		t.Errorf(`edgefence_transitions_total{type="ENTER"} = %v after restart, want 1 (truck-2's new fence only)`, v)
	}
}

// On shutdown the broker evaluates what its reorder buffers hold and
// publishes the transitions before it stops, so that a ping it
// acknowledged is never lost, even with a long hold.
func TestGracefulCloseFlushesReorderBuffers(t *testing.T) {
	cfg := testConfig(t)
	cfg.Engine.Hold = time.Minute
	t0 := nowMs() - 10_000

	first := start(t, cfg)
	tracker := connect5(t, first.MQTTAddr(), "tracker")
	tracker.ping("late-night", museumLat, museumLon, t0)
	closeServer(t, first)

	second := start(t, cfg)
	dash := connect5(t, second.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/+/late-night")
	got := dash.Sync()
	if len(got) != 1 {
		t.Fatalf("after restart: %d retained transitions for late-night, want the flushed ENTER", len(got))
	}
	if tr := decodeTransition(t, "geofence", got[0]); tr.short() != "ENTER zone-museumsinsel late-night" || tr.Ts != t0 || !tr.retained {
		t.Errorf("after restart: %s retained=%v, want ENTER at %d", tr, tr.retained, t0)
	}
}

// A retained EXIT keeps counting down its expiry across a restart (the
// store keeps the message, not the deadline), and one whose expiry passed
// while the broker was down is gone afterwards.
func TestRestartKeepsExitExpiry(t *testing.T) {
	cfg := testConfig(t)
	t0 := nowMs() - 60_000
	first := start(t, cfg)
	dash := connect5(t, first.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect5(t, first.MQTTAddr(), "tracker")
	tracker.ping("bus-1", museumLat, museumLon, t0)
	tracker.ping("bus-1", outLat, outLon, t0+1000)
	expectTransitions(t, dash, "ENTER zone-museumsinsel bus-1", "EXIT zone-museumsinsel bus-1")
	exitDecided := time.Now()
	closeServer(t, first)

	second := start(t, cfg)
	later := connect5(t, second.MQTTAddr(), "later")
	later.Subscribe("geofence/+/bus-1")
	got := later.Sync()
	if len(got) != 1 {
		t.Fatalf("after restart: %d retained messages for bus-1, want the EXIT", len(got))
	}
	tr := decodeTransition(t, "geofence", got[0])
	if tr.short() != "EXIT zone-museumsinsel bus-1" || tr.expiry == nil || *tr.expiry > 24*3600 || *tr.expiry < 24*3600-60 {
		t.Errorf("after restart: %s with expiry %v, want the EXIT expiring in about 24 h", tr, tr.expiry)
	}
	closeServer(t, second)

	// The same store, restarted with the shortest expiry (1 s) once a second
	// has passed since the EXIT was decided: it has expired.
	cfg.ExitExpiry = time.Second
	time.Sleep(time.Until(exitDecided.Add(time.Second + 10*time.Millisecond)))
	third := start(t, cfg)
	later = connect5(t, third.MQTTAddr(), "later")
	later.Subscribe("geofence/#")
	if got := later.Sync(); len(got) != 0 {
		t.Errorf("expired EXIT still retained after restart: %s %s", got[0].Topic, got[0].Payload)
	}
	// bus-1 is outside everywhere: its next ping inside is an ENTER.
	tracker = connect5(t, third.MQTTAddr(), "tracker")
	tracker.ping("bus-1", museumLat, museumLon, t0+2000)
	expectTransitions(t, later, "ENTER zone-museumsinsel bus-1")
}

// Two brokers on one data dir would corrupt each other's state: the
// second must fail fast with a clear error instead of hanging.
func TestSecondBrokerOnSameDataDirFailsFast(t *testing.T) {
	cfg := testConfig(t)
	start(t, cfg)
	begin := time.Now()
	srv, err := broker.Start(cfg)
	if err == nil {
		closeServer(t, srv)
		t.Fatal("second Start on the same data dir succeeded")
	}
	if !strings.Contains(err.Error(), cfg.DataDir) {
		t.Errorf("error %q does not name the data dir %s", err, cfg.DataDir)
	}
	if d := time.Since(begin); d > wait {
		t.Errorf("second Start took %v to fail", d)
	}
}

// A missing fence file is a startup error naming the file.
func TestStartWithMissingFencesFails(t *testing.T) {
	cfg := testConfig(t)
	cfg.Fences = "does-not-exist.geojson"
	srv, err := broker.Start(cfg)
	if err == nil {
		closeServer(t, srv)
		t.Fatal("Start with a missing fence file succeeded")
	}
	if !strings.Contains(err.Error(), "does-not-exist.geojson") {
		t.Errorf("error %q does not name the fence file", err)
	}
}

func TestExitExpiryBelowOneSecondIsRefusedAtStart(t *testing.T) {
	cfg := broker.DefaultConfig()
	cfg.MQTTAddr, cfg.HTTPAddr, cfg.DataDir = "127.0.0.1:0", "", ""
	cfg.Fences = "../fences.geojson"
	for _, d := range []time.Duration{0, 500 * time.Millisecond, -time.Hour} {
		cfg.ExitExpiry = d
		if srv, err := broker.Start(cfg); err == nil {
			srv.Close(context.Background())
			t.Fatalf("Start with exit expiry %v succeeded; want an error", d)
		} else if !strings.Contains(err.Error(), "exit expiry") {
			t.Fatalf("error %q does not name the exit expiry", err)
		}
	}
}
