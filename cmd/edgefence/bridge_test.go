package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `edgefence bridge`, as an operator runs it, against an `edgefence serve`
// upstream: killed with SIGKILL while pings keep coming, it restarts from
// the retained state and its session (no ENTER again; the EXIT decided
// from the pings sent while it was dead), and SIGTERM stops it cleanly.
func TestBridgeKillNineThenSIGTERM(t *testing.T) {
	up := startServe(t, t.TempDir(), nil, "--hold", "100ms", "--rate", "0")
	queue := filepath.Join(t.TempDir(), "queue")
	args := []string{"bridge",
		"--upstream", "mqtt://" + up.mqtt,
		"--client-id", "bridge-kill-test",
		"--http-addr", "127.0.0.1:0",
		"--queue-dir", queue,
		"--fences", bundledFences,
		"--fences-poll", "0",
		"--transition-prefix", "bridged", // serve keeps geofence/# for itself
		"--late-topic", "bridged-late",
		"--reject-topic", "bridged-rejected",
		"--hold", "100ms",
		"--speed-gate", "0", // the fixtures jump kilometres in a second
		"--reconnect-min", "20ms", "--reconnect-max", "200ms",
		"--restore-quiet", "100ms",
		"--log-level", "debug",
	}
	start := func() *proc {
		p := runBin(t, nil, args...)
		p.http = p.waitLog("edgefence bridge starting")["http"]
		p.waitReady()
		return p
	}
	b := start()
	obs := connect(t, up.mqtt, "observer")
	obs.Subscribe("bridged/#")
	tracker := connect(t, up.mqtt, "tracker")
	base := time.Now().UnixMilli() - 60_000

	tracker.ping("truck-1", museumLat, museumLon, base)
	if got, want := decode(t, "bridged", obs.Next("ENTER")).String(), fmt.Sprintf("ENTER zone-museumsinsel truck-1 @%d", base); got != want {
		t.Fatalf("first transition %s, want %s", got, want)
	}
	// Kill it with nothing in flight: the observer has the ENTER once the
	// broker routed it, but the bridge may not have handled its PUBACK yet,
	// and then sends it again after the restart (at least once).
	b.waitMetric("edgefence_bridge_queued_transitions", 0)
	if st := b.signal(syscall.SIGKILL, wait); !isKilled(st) {
		t.Fatalf("bridge exit %v, want killed", st)
	}
	tracker.ping("truck-1", museumLat, museumLon, base+500) // still inside
	tracker.ping("truck-1", outLat, outLon, base+1000)      // left

	b = start()
	// A repeated ENTER (from the ping at +500) would come before the EXIT.
	if got, want := decode(t, "bridged", obs.Next("EXIT")).String(), fmt.Sprintf("EXIT zone-museumsinsel truck-1 @%d", base+1000); got != want {
		t.Fatalf("after the restart %s, want %s", got, want)
	}
	if extra := obs.Sync(); len(extra) != 0 {
		t.Errorf("%d more messages after the EXIT: first on %s", len(extra), extra[0].Topic)
	}

	st := b.signal(syscall.SIGTERM, 2*wait)
	if !st.Success() {
		t.Errorf("SIGTERM: exit %v, want 0", st)
	}
	if out := b.out.String(); !strings.Contains(out, "msg=stopped") {
		t.Errorf("no clean stop in the log:\n%s", out)
	}
}
