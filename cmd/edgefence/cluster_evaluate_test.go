package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgefence/edgefence/internal/natstest"
)

// TestServeClusterEvaluates: two serve --cluster nodes on one NATS
// server, and no edgefence worker. The nodes share the partitions between
// them (--evaluate, the default), so a ping taken by node A is evaluated
// by whichever node owns its partition, and its ENTER reaches a dashboard
// on node B, live, and a dashboard that connects to A once A has it,
// retained.
func TestServeClusterEvaluates(t *testing.T) {
	dir := t.TempDir()
	ns, _ := natstest.Start(t, dir, "nats.conf", fmt.Sprintf(
		"server_name: n1\nlisten: \"127.0.0.1:-1\"\njetstream { store_dir: %q }\n", filepath.Join(dir, "js")))
	node := func(name string, extra ...string) *proc {
		args := append([]string{"--cluster", ns.ClientURL(), "--partitions", "4", "--replicas", "1", "--hold", "100ms"}, extra...)
		return startServe(t, filepath.Join(dir, name), nil, args...)
	}
	a, b := node("a"), node("b")
	// Every partition is owned by one of the two within a lease (5 s).
	deadline := time.Now().Add(4 * wait)
	for a.metricValue("edgefence_worker_partitions_owned")+b.metricValue("edgefence_worker_partitions_owned") != 4 {
		if time.Now().After(deadline) {
			t.Fatalf("partitions owned: A %v, B %v, want 4 between them", a.metricValue("edgefence_worker_partitions_owned"), b.metricValue("edgefence_worker_partitions_owned"))
		}
		time.Sleep(50 * time.Millisecond)
	}

	dash := connect(t, b.mqtt, "dash-b")
	dash.Subscribe("geofence/#")
	tracker := connect(t, a.mqtt, "van-7")
	now := time.Now().UnixMilli()
	tracker.ping("van-7", outLat, outLon, now-2000)
	tracker.ping("van-7", museumLat, museumLon, now-1000)
	tracker.ping("van-7", museumLat, museumLon, now)
	if tr := decode(t, "geofence", dash.Next("ENTER at a dashboard on B")); tr.Type != "ENTER" || tr.Device != "van-7" || tr.Fence != "zone-museumsinsel" {
		t.Fatalf("dashboard on B got %v, want ENTER zone-museumsinsel van-7", tr)
	}
	// Afterwards: once A has it too. Each node follows the history on
	// its own (A, started before any partition made the stream, looks
	// for it once a second), so A may retain it after B's dashboard saw it.
	for a.metricValue(`edgefence_cluster_follow_updates_total{source="history"}`) < 1 {
		if time.Now().After(deadline.Add(4 * wait)) {
			t.Fatal("node A delivered nothing from the history stream")
		}
		time.Sleep(20 * time.Millisecond)
	}
	late := connect(t, a.mqtt, "dash-a")
	late.Subscribe("geofence/#")
	m := late.Next("retained ENTER at a dashboard connecting to A afterwards")
	if tr := decode(t, "geofence", m); tr.Type != "ENTER" || tr.Device != "van-7" || !m.Retain {
		t.Fatalf("late dashboard on A got %v (retained %v), want the retained ENTER of van-7", tr, m.Retain)
	}
	if got := a.metricValue("edgefence_worker_pings_total") + b.metricValue("edgefence_worker_pings_total"); got < 3 {
		t.Errorf("the nodes' partitions took %v pings, want the 3 sent", got)
	}
}
