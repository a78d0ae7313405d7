package broker_test

import (
	"testing"

	"github.com/edgefence/edgefence/broker"
)

// The speed gate is on by default: a multipath fix kilometres from a
// device's last ones, a second after them, neither EXITs nor ENTERs
// anything; it is counted, and the next fix, back where the device is,
// changes nothing either. Two fixes that agree are a device that really
// went there.
func TestOutlierFixIsSetAsideByDefault(t *testing.T) {
	cfg := testConfig(t)
	cfg.Engine.MaxSpeed = broker.DefaultConfig().Engine.MaxSpeed
	if cfg.Engine.MaxSpeed <= 0 {
		t.Fatalf("the default speed gate is %v m/s, want it on", cfg.Engine.MaxSpeed)
	}
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	t0 := nowMs() - 60_000

	tracker.ping("van-1", museumLat, museumLon, t0)
	expectTransitions(t, dash, "ENTER zone-museumsinsel van-1")
	tracker.ping("van-1", outLat, outLon, t0+1000) // 7 km in a second
	tracker.ping("van-1", museumLat, museumLon, t0+2000)
	if got := dash.Sync(); len(got) != 0 {
		t.Fatalf("an outlier fix published %d transitions (first on %s), want none", len(got), got[0].Topic)
	}
	if n := metric(t, srv, `edgefence_gated_total`); n != 1 {
		t.Errorf("edgefence_gated_total = %v, want 1", n)
	}

	// Two fixes out there, 20 s on, agree: the device went.
	tracker.ping("van-1", outLat, outLon, t0+20_000)
	tracker.ping("van-1", outLat, outLon, t0+21_000)
	expectTransitions(t, dash, "EXIT zone-museumsinsel van-1")
}
