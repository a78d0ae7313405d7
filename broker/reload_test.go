package broker_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/edgefence/edgefence/broker"
)

// Two fences around the museum point: "inner" is reloaded away, "outer"
// stays. The bundled file's museum zone is not used here.
const reloadBefore = `{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"outer","geometry":{"type":"Polygon","coordinates":[[[13.38,52.51],[13.42,52.51],[13.42,52.53],[13.38,52.53],[13.38,52.51]]]}},
 {"type":"Feature","id":"inner","geometry":{"type":"Polygon","coordinates":[[[13.39,52.515],[13.41,52.515],[13.41,52.525],[13.39,52.525],[13.39,52.515]]]}}]}`

const reloadAfter = `{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"outer","geometry":{"type":"Polygon","coordinates":[[[13.38,52.51],[13.42,52.51],[13.42,52.53],[13.38,52.53],[13.38,52.51]]]}}]}`

func TestFenceReloadExitsRemovedFencesAndKeepsTheRest(t *testing.T) {
	cfg := testConfig(t)
	cfg.Fences = filepath.Join(t.TempDir(), "fences.geojson")
	if err := os.WriteFile(cfg.Fences, []byte(reloadBefore), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.FencesPoll = 0
	srv := start(t, cfg)
	dash := connect5(t, srv.MQTTAddr(), "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect5(t, srv.MQTTAddr(), "tracker")
	t0 := nowMs()
	tracker.ping("truck-1", museumLat, museumLon, t0)
	expectTransitions(t, dash, "ENTER inner truck-1", "ENTER outer truck-1")
	inner := connect5(t, srv.MQTTAddr(), "inner-watcher")
	inner.Subscribe("geofence/inner/#")
	if got := inner.Sync(); len(got) != 1 {
		t.Fatalf("retained before reload: %d messages on geofence/inner/#, want the ENTER", len(got))
	}

	// An invalid set is rejected whole; the old fences stay live.
	if err := srv.ApplyFences([]byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"a/b"}]}`), "test"); err == nil {
		t.Fatal("invalid fence set accepted")
	}
	if err := os.WriteFile(cfg.Fences, []byte(reloadAfter), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := srv.ReloadFences(); err != nil {
		t.Fatal(err)
	}
	// The publisher sends them after ReloadFences returns: wait for both.
	got := []*paho.Publish{inner.Next("the EXIT of the removed fence"), inner.Next("the retained ENTER cleared")}
	dash.Next("the EXIT on geofence/#")
	dash.Next("the clearing on geofence/#")
	if len(got) != 2 || !strings.Contains(string(got[0].Payload), `"type":"EXIT"`) ||
		!strings.Contains(string(got[0].Payload), `"reason":"fence_removed"`) || got[0].Retain || len(got[1].Payload) != 0 {
		for _, m := range got {
			t.Logf("%s retain=%v %s", m.Topic, m.Retain, m.Payload)
		}
		t.Fatalf("after reload: want the EXIT with reason fence_removed, then the retained ENTER cleared")
	}
	// Its retained topic is cleared; outer's ENTER stays, and the next
	// ping brings no duplicate ENTER.
	later := connect5(t, srv.MQTTAddr(), "later")
	later.Subscribe("geofence/#")
	got = later.Sync()
	if len(got) != 1 || got[0].Topic != "geofence/outer/truck-1" {
		t.Fatalf("retained after reload: %d messages, want only geofence/outer/truck-1", len(got))
	}
	tracker.ping("truck-1", museumLat, museumLon, t0+1000)
	tracker.ping("truck-1", outLat, outLon, t0+2000)
	expectTransitions(t, dash, "EXIT outer truck-1")
	ok, bad := metric(t, srv, `edgefence_fence_reloads_total{result="ok"}`), metric(t, srv, `edgefence_fence_reloads_total{result="error"}`)
	if ok != 1 || bad != 1 {
		t.Fatalf("reload metrics: %v ok, %v error; want 1 and 1", ok, bad)
	}
}

// The file poller picks up a changed fence file by itself.
func TestFenceFileChangeIsPickedUp(t *testing.T) {
	cfg := testConfig(t)
	cfg.Fences = filepath.Join(t.TempDir(), "fences.geojson")
	if err := os.WriteFile(cfg.Fences, []byte(reloadBefore), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.FencesPoll = 20 * time.Millisecond
	srv := start(t, cfg)
	if err := os.WriteFile(cfg.Fences, []byte(reloadAfter), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(wait)
	for srv.Engine().Fences().Len() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("fence file change not picked up within %v", wait)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var _ = broker.DefaultConfig

// An admin publishes a fence set on the admin topic: a valid one is
// applied (and not routed or retained), an invalid one gets 0x99 and the
// live fences stay.
func TestAdminTopicReplacesFences(t *testing.T) {
	cfg := testConfig(t)
	srv := start(t, cfg)
	admin := connect5(t, srv.MQTTAddr(), "admin")
	if rc := admin.Publish("edgefence/admin/fences", 1, []byte(`{"type":"FeatureCollection","features":[{"type":"Feature"}]}`)); rc != 0x99 {
		t.Fatalf("invalid fence set: reason %#x, want 0x99", rc)
	}
	if n := srv.Engine().Fences().Len(); n != 5 {
		t.Fatalf("%d fences after an invalid set, want the bundled 5", n)
	}
	if rc := admin.Publish("edgefence/admin/fences", 1, []byte(reloadAfter)); rc >= 0x80 {
		t.Fatalf("valid fence set: reason %#x", rc)
	}
	if n := srv.Engine().Fences().Len(); n != 1 {
		t.Fatalf("%d fences after the admin set, want 1", n)
	}
}
