package broker_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/capture"
	"github.com/edgefence/edgefence/evaluator/clock"
)

// --capture records every accepted ping, and only those, with the stamps
// the engine used, in acceptance order; closing the broker leaves all of
// them in the file.
func TestCaptureRecordsAcceptedPings(t *testing.T) {
	cfg := testConfig(t)
	cfg.Capture = filepath.Join(t.TempDir(), "capture.jsonl")
	srv, err := broker.Start(cfg)
	if err != nil {
		t.Fatalf("broker.Start: %v", err)
	}
	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	t0 := nowMs() - 5000
	tst := time.Now().Unix() - 3
	before := time.Now()
	tracker.ping("cap-1", museumLat, museumLon, t0)
	if rc := tracker.Publish("devices/cap-1/telemetry", 1, []byte(`{"lat":52.5,"lon":13.3}`)); rc != 0 {
		t.Fatalf("ping without ts: reason %#x", rc)
	}
	if rc := tracker.Publish("devices/cap-1/telemetry", 1, []byte(`{"lat":1000,"lon":0}`)); rc != 0x99 {
		t.Fatalf("bad ping: reason %#x, want 0x99", rc)
	}
	tracker.ping("cap-2", outLat, outLon, t0+500)
	owntracks := fmt.Appendf(nil, `{"_type":"location","lat":%v,"lon":%v,"tst":%d,"acc":12}`, alexLat, alexLon, tst)
	if rc := tracker.Publish("owntracks/alice/phone", 1, owntracks); rc != 0 {
		t.Fatalf("OwnTracks ping: reason %#x", rc)
	}
	after := time.Now()
	deadline := time.Now().Add(wait)
	for metric(t, srv, "edgefence_captured_total") < 4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := metric(t, srv, "edgefence_captured_total"); n != 4 {
		t.Errorf("edgefence_captured_total %v, want 4", n)
	}
	if n := metric(t, srv, "edgefence_capture_dropped_total"); n != 0 {
		t.Errorf("edgefence_capture_dropped_total %v, want 0", n)
	}
	closeServer(t, srv)

	var got []capture.Record
	_, st, err := capture.ReadFiles(func(r *capture.Record) error {
		got = append(got, *r)
		return nil
	}, cfg.Capture)
	if err != nil || st.Skipped != 0 {
		t.Fatalf("ReadFiles: %+v, %v", st, err)
	}
	ms := func(v int64) int64 { return v * 1e6 }
	want := []capture.Record{
		{Seq: 1, Device: "cap-1", Lat: museumLat, Lon: museumLon, Stamp: ms(t0), HasStamp: true, Event: ms(t0)},
		{Seq: 2, Device: "cap-1", Lat: 52.5, Lon: 13.3, Clamp: clock.ClampMissing},
		{Seq: 3, Device: "cap-2", Lat: outLat, Lon: outLon, Stamp: ms(t0 + 500), HasStamp: true, Event: ms(t0 + 500)},
		{Seq: 4, Device: "alice-phone", Lat: alexLat, Lon: alexLon, Acc: 12, HasAcc: true, Stamp: tst * 1e9, HasStamp: true, Event: tst * 1e9},
	}
	if len(got) != len(want) {
		t.Fatalf("captured %d records, want %d: %+v", len(got), len(want), got)
	}
	prev := before.UnixNano()
	for i := range got {
		g, w := got[i], want[i]
		if g.Ingest < prev || g.Ingest > after.UnixNano() {
			t.Errorf("record %d: ingest %d not in [%d, %d] after the one before", i, g.Ingest, prev, after.UnixNano())
		}
		prev = g.Ingest
		if w.Clamp == clock.ClampMissing {
			// A missing stamp is clamped to the device's clock as its model
			// has it: the offset learned from its first ping.
			w.Event = g.Ingest + (got[0].Event - got[0].Ingest)
		}
		w.Ingest = g.Ingest
		if g != w {
			t.Errorf("record %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func TestCaptureFileThatCannotBeOpenedFailsStart(t *testing.T) {
	cfg := testConfig(t)
	cfg.Capture = filepath.Join(t.TempDir(), "no-such-dir", "capture.jsonl")
	srv, err := broker.Start(cfg)
	if err == nil {
		closeServer(t, srv)
		t.Fatal("Start succeeded")
	}
	if !strings.Contains(err.Error(), cfg.Capture) {
		t.Errorf("error %q does not name %s", err, cfg.Capture)
	}
}
