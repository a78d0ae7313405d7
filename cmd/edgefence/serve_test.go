package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgefence/edgefence/internal/slogtext"
)

// The power is pulled (kill -9): nothing gets to flush. What had been
// published is in the store; after the restart, devices already inside
// are not announced again, and a device that left gets its EXIT. A
// publisher that published a batch before its commit returned fails
// here: the kill follows the dashboard's receipt while the commit still
// waits on the disk (docs/persistence.md).
func TestKillNineRestartKeepsState(t *testing.T) {
	dataDir := t.TempDir()
	t0 := time.Now().UnixMilli() - 60_000
	// Every transition the dashboards saw, per device, across both runs.
	seen := map[string][]string{}
	record := func(tr transition) { seen[tr.Device] = append(seen[tr.Device], tr.String()) }

	first := startServe(t, dataDir, nil, "--hold", "100ms")
	dash := connect(t, first.mqtt, "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect(t, first.mqtt, "tracker")
	tracker.ping("dev-a", museumLat, museumLon, t0)
	tracker.ping("dev-b", alexLat, alexLon, t0)
	for range 2 {
		record(decode(t, "geofence", dash.Next("the two ENTERs")))
	}
	if st := first.signal(syscall.SIGKILL, wait); !isKilled(st) {
		t.Fatalf("first run ended with %v, want killed", st)
	}

	second := startServe(t, dataDir, nil, "--hold", "100ms")
	dash = connect(t, second.mqtt, "dashboard")
	dash.Subscribe("geofence/#")
	retained := dash.Sync()
	for _, m := range retained {
		record(decode(t, "geofence", m))
	}
	tracker = connect(t, second.mqtt, "tracker")
	tracker.ping("dev-a", museumLat, museumLon, t0+1000) // still inside: nothing to say
	tracker.ping("dev-a", outLat, outLon, t0+2000)       // then leaves
	tracker.ping("dev-b", outLat, outLon, t0+1000)       // left customer-alex
	for range 2 {
		record(decode(t, "geofence", dash.Next("the two EXITs")))
	}

	want := map[string][]string{
		"dev-a": {
			"ENTER zone-museumsinsel dev-a @" + itoa(t0),
			"ENTER zone-museumsinsel dev-a @" + itoa(t0) + " (retained)",
			"EXIT zone-museumsinsel dev-a @" + itoa(t0+2000),
		},
		"dev-b": {
			"ENTER customer-alex dev-b @" + itoa(t0),
			"ENTER customer-alex dev-b @" + itoa(t0) + " (retained)",
			"EXIT customer-alex dev-b @" + itoa(t0+1000),
		},
	}
	for dev, w := range want {
		if !slices.Equal(seen[dev], w) {
			t.Errorf("%s saw\n\t%s\nwant\n\t%s", dev, strings.Join(seen[dev], "\n\t"), strings.Join(w, "\n\t"))
		}
	}
	if len(seen) != len(want) {
		t.Errorf("transitions for devices %v, want dev-a and dev-b only", seen)
	}
}

// SIGTERM (systemd stop, docker stop) flushes the reorder buffers: a ping
// still held (1 min hold) is evaluated and its ENTER stored before the
// process exits 0.
func TestSIGTERMFlushesAndExitsCleanly(t *testing.T) {
	dataDir := t.TempDir()
	t0 := time.Now().UnixMilli() - 10_000

	first := startServe(t, dataDir, nil, "--hold", "1m")
	tracker := connect(t, first.mqtt, "tracker")
	tracker.ping("night-1", museumLat, museumLon, t0)
	begin := time.Now()
	st := first.signal(syscall.SIGTERM, 2*wait)
	if !st.Success() {
		t.Fatalf("SIGTERM: exited with %v, want 0", st)
	}
	t.Logf("SIGTERM to exit: %v", time.Since(begin))

	second := startServe(t, dataDir, nil)
	dash := connect(t, second.mqtt, "dashboard")
	dash.Subscribe("geofence/+/night-1")
	got := dash.Sync()
	if len(got) != 1 {
		t.Fatalf("after restart: %d retained transitions for night-1, want the flushed ENTER", len(got))
	}
	if tr := decode(t, "geofence", got[0]); tr.String() != "ENTER zone-museumsinsel night-1 @"+itoa(t0)+" (retained)" {
		t.Errorf("after restart: %s, want the retained ENTER at %d", tr, t0)
	}
}

// Settings come from flags, then EDGEFENCE_* variables, then the --config
// file: each source is honoured and the earlier one wins.
func TestConfigPrecedenceFlagsEnvConfigFile(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "edgefence.conf")
	body := "# operator config\npprof true\ntransition-prefix from-config\nhold 100ms\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"EDGEFENCE_TRANSITION_PREFIX=from-env", // beats the config file
		"EDGEFENCE_MQTT_ADDR=127.0.0.1:1",      // loses to --mqtt-addr
	}
	p := startServe(t, t.TempDir(), env, "--config", conf)

	// The flag's MQTT address won: serve bound port 0, not the env's 1.
	if p.mqtt == "127.0.0.1:1" {
		t.Errorf("serve listens on EDGEFENCE_MQTT_ADDR's %s, want --mqtt-addr's port 0", p.mqtt)
	}
	if code := httpStatus(t, "http://"+p.http+"/debug/pprof/"); code != 200 {
		t.Errorf("config file 'pprof true': /debug/pprof/ is %d, want 200", code)
	}
	dash := connect(t, p.mqtt, "dashboard")
	dash.Subscribe("from-env/#", "from-config/#", "geofence/#")
	tracker := connect(t, p.mqtt, "tracker")
	tracker.ping("cfg-1", museumLat, museumLon, time.Now().UnixMilli()-5000)
	m := dash.Next("ENTER under the env prefix")
	if tr := decode(t, "from-env", m); tr.Type != "ENTER" || tr.Device != "cfg-1" {
		t.Errorf("got %s on %s", tr, m.Topic)
	}
}

// A mistake in any source is a startup error that names the setting or
// file, not a broker running with a silently different configuration.
func TestBadConfigurationIsAStartupError(t *testing.T) {
	badConf := filepath.Join(t.TempDir(), "bad.conf")
	if err := os.WriteFile(badConf, []byte("hold soon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-fences.geojson")
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"invalid env var", []string{"EDGEFENCE_HOLD=bogus"}, nil, []string{"hold", "EDGEFENCE_HOLD"}},
		{"invalid config file value", nil, []string{"--config", badConf}, []string{"hold", "config file"}},
		{"hold out of range", nil, []string{"--hold", "1h"}, []string{"hold"}},
		{"missing fence file", nil, []string{"--fences", missing}, []string{missing}},
		{"stray argument", nil, []string{"extra"}, []string{"extra"}},
		{"removed tracker listener", nil, []string{"--tracker-addr", "127.0.0.1:0"}, []string{"tracker-addr", "--mqtt-addr"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"serve",
				"--mqtt-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
				"--data-dir", t.TempDir(), "--fences", bundledFences,
			}, tc.args...)
			p := runBin(t, tc.env, args...)
			st := p.wait(2 * wait)
			if st.Success() {
				t.Fatalf("exited 0, want a startup error:\n%s", p.out)
			}
			out := p.out.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("error output does not mention %q:\n%s", w, out)
				}
			}
		})
	}
}

// A config file written for an earlier version, with flags since removed,
// still starts the broker: each removed flag is named in a warning.
func TestRemovedFlagsInAnOldConfigFileAreReported(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "old.conf")
	body := "light-trackers true\ndirect-ingest false\ngc-headroom 128MiB\n"
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, t.TempDir(), nil, "--config", conf, "--light-trackers")
	warned := map[string]string{}
	for line := range strings.Lines(p.out.String()) {
		if a, ok := slogtext.Parse(strings.TrimSuffix(line, "\n")); ok && a["msg"] == "removed flag set" {
			warned[a["flag"]] = a["advice"]
		}
	}
	for _, name := range []string{"light-trackers", "direct-ingest", "gc-headroom"} {
		if warned[name] == "" {
			t.Errorf("no warning with advice for --%s (warned: %v)", name, warned)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
