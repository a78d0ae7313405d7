package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A store damaged while the broker was stopped: serve refuses to start
// when bbolt cannot read the file, naming it; `store check` finds a
// damaged record and exits 1; `store repair` keeps the damaged file and
// leaves a store that checks clean and that serve starts on with the
// state of every record that was readable.
func TestStoreCheckAndRepair(t *testing.T) {
	dataDir := t.TempDir()
	path := filepath.Join(dataDir, "edgefence.db")
	t0 := time.Now().UnixMilli() - 60_000
	first := startServe(t, dataDir, nil, "--hold", "100ms")
	dash := connect(t, first.mqtt, "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect(t, first.mqtt, "tracker")
	tracker.ping("dev-a", museumLat, museumLon, t0)
	tracker.ping("dev-b", alexLat, alexLon, t0)
	for range 2 {
		decode(t, "geofence", dash.Next("the two ENTERs"))
	}
	if st := first.signal(syscall.SIGTERM, 2*wait); !st.Success() {
		t.Fatalf("SIGTERM: %v", st)
	}

	check := runBin(t, nil, "store", "check", "--data-dir", dataDir)
	if st := check.wait(wait); !st.Success() || !strings.Contains(check.out.String(), "ok, 2 readable records") {
		t.Fatalf("check of a sound store: %v\n%s", st, check.out)
	}

	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// 100 bytes of garbage in front: serve refuses, naming the file.
	if err := os.WriteFile(path, append(bytes.Repeat([]byte{0xa5}, 100), good...), 0o600); err != nil {
		t.Fatal(err)
	}
	refused := runBin(t, nil, "serve", "--mqtt-addr", "127.0.0.1:0", "--http-addr", "", "--data-dir", dataDir, "--fences", bundledFences)
	if st := refused.wait(wait); st.Success() || !strings.Contains(refused.out.String(), path) {
		t.Fatalf("serve on a store with a garbage prefix: %v, want a refusal naming %s:\n%s", st, path, refused.out)
	}

	// dev-b's record damaged (its topic, in the stored JSON).
	field := []byte(`"topic_name":"geofence/customer-alex/dev-b"`)
	bad := bytes.Clone(good)
	for i := bytes.Index(bad, field); i >= 0; i = bytes.Index(bad, field) {
		bad[i+len(field)-2] ^= 0x01
	}
	if bytes.Equal(bad, good) {
		t.Fatal("dev-b's record not found in the store")
	}
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	check = runBin(t, nil, "store", "check", "--data-dir", dataDir)
	if st := check.wait(wait); st.ExitCode() != 1 || !strings.Contains(check.out.String(), `unreadable record "RET_geofence/customer-alex/dev-b"`) {
		t.Fatalf("check of a damaged store: %v, want exit 1 naming dev-b's record:\n%s", st, check.out)
	}
	repair := runBin(t, nil, "store", "repair", "--data-dir", dataDir)
	if st := repair.wait(wait); !st.Success() || !strings.Contains(repair.out.String(), "repaired: 1 records") {
		t.Fatalf("repair: %v\n%s", st, repair.out)
	}
	kept, _ := filepath.Glob(path + ".damaged-*")
	if len(kept) != 1 {
		t.Fatalf("damaged files kept: %v, want one", kept)
	}
	if b, _ := os.ReadFile(kept[0]); !bytes.Equal(b, bad) {
		t.Fatal("the damaged file was not kept as it was")
	}
	check = runBin(t, nil, "store", "check", "--data-dir", dataDir)
	if st := check.wait(wait); !st.Success() {
		t.Fatalf("check after repair: %v\n%s", st, check.out)
	}

	second := startServe(t, dataDir, nil)
	dash = connect(t, second.mqtt, "dashboard")
	dash.Subscribe("geofence/#")
	got := dash.Sync()
	if len(got) != 1 || decode(t, "geofence", got[0]).Device != "dev-a" {
		t.Fatalf("after repair: %d retained transitions, want dev-a's ENTER", len(got))
	}
}
