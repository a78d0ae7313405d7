package loadgen_test

import (
	"context"
	"testing"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/loadgen"
)

// The suite's tracker port row in small: the trackers publish to the
// --tracker-addr listener, the subscriber reads the transitions from the
// MQTT listener (--sub-addr), and each expected transition arrives.
func TestLoadOnTrackerPort(t *testing.T) {
	srv, fences := startBroker(t, false, func(c *broker.Config) { c.TrackerAddr = "127.0.0.1:0" })
	load := tinyLoad(srv, fences, "geofence/#")
	load.Addr, load.SubAddr = srv.TrackerAddr(), srv.MQTTAddr()
	res, err := loadgen.Run(context.Background(), load)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Sent == 0 || res.WriteErrors+res.ReadErrors > 0 {
		t.Fatalf("sent %d, %d write and %d read errors (%s)", res.Sent, res.WriteErrors, res.ReadErrors, res.FirstError)
	}
	if got := scrape(t, srv)["edgefence_pings_received_total"]; got != float64(res.Sent) {
		t.Errorf("edgefence_pings_received_total = %v, loadgen sent %d", got, res.Sent)
	}
	if res.Acked != res.Sent || res.Unacked != 0 {
		t.Errorf("acked %d of %d, %d unacked", res.Acked, res.Sent, res.Unacked)
	}
	if res.Matched == 0 || res.Matched != res.Expected || res.Missing != 0 || res.Unmatched != 0 {
		t.Errorf("transitions: expected %d, matched %d, missing %d, unmatched %d", res.Expected, res.Matched, res.Missing, res.Unmatched)
	}
}
