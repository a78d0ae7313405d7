package main

import (
	"encoding/binary"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/hooks/storage"

	"github.com/edgefence/edgefence/store"
)

// A store written by serve: dev-a entered the museum fence, then left it
// (two commits, the EXIT last). The broker is stopped when it returns.
func enterThenExit(t *testing.T, dataDir string) {
	t.Helper()
	srv := startServe(t, dataDir, nil, "--hold", "100ms")
	dash := connect(t, srv.mqtt, "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect(t, srv.mqtt, "tracker")
	t0 := time.Now().UnixMilli() - 60_000
	tracker.ping("dev-a", museumLat, museumLon, t0)
	if tr := decode(t, "geofence", dash.Next("dev-a's ENTER")); tr.Type != "ENTER" {
		t.Fatalf("got %s, want ENTER", tr.Type)
	}
	tracker.ping("dev-b", alexLat, alexLon, t0)
	decode(t, "geofence", dash.Next("dev-b's ENTER"))
	tracker.ping("dev-a", outLat, outLon, t0+1000)
	if tr := decode(t, "geofence", dash.Next("dev-a's EXIT")); tr.Type != "EXIT" {
		t.Fatalf("got %s, want EXIT", tr.Type)
	}
	if st := srv.signal(syscall.SIGTERM, 2*wait); !st.Success() {
		t.Fatalf("SIGTERM: %v", st)
	}
}

// The finding: one flipped byte in bbolt's newer meta page, and
// bbolt silently opened the older one: dev-a, whose EXIT was published,
// came back inside, and `store check` said ok. Now serve refuses to
// start, naming the file and the repair command; check reports the page
// and exits 1; repair keeps the valid page's commit in a fresh file (the
// last commit, the EXIT, is lost: dev-a is inside again, as documented)
// and serve starts on it.
func TestStoreRefusesAFlippedMetaPage(t *testing.T) {
	dataDir := t.TempDir()
	path := filepath.Join(dataDir, "edgefence.db")
	enterThenExit(t, dataDir)

	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := int(binary.NativeEndian.Uint32(b[16+8:])) // page 0's meta: its page size
	txid := func(page int) uint64 { return binary.NativeEndian.Uint64(b[page*ps+16+48:]) }
	newer := 0
	if txid(1) > txid(0) {
		newer = 1
	}
	b[newer*ps+16+16] ^= 0x01 // the root bucket's page id, under the checksum
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}

	refused := runBin(t, nil, "serve", "--mqtt-addr", "127.0.0.1:0", "--http-addr", "", "--data-dir", dataDir, "--fences", bundledFences)
	out := refused.wait(wait)
	if out.Success() || !strings.Contains(refused.out.String(), path) || !strings.Contains(refused.out.String(), "edgefence store repair --data-dir "+dataDir) {
		t.Fatalf("serve on a store with its newer meta page flipped: %v, want a refusal naming %s and the repair command:\n%s", out, path, refused.out)
	}
	check := runBin(t, nil, "store", "check", "--data-dir", dataDir)
	want := regexp.MustCompile(`meta page \d is invalid \(checksum mismatch\)`)
	if st := check.wait(wait); st.ExitCode() != 1 || !want.MatchString(check.out.String()) {
		t.Fatalf("store check: %v, want exit 1 reporting the meta page:\n%s", st, check.out)
	}

	repair := runBin(t, nil, "store", "repair", "--data-dir", dataDir)
	if st := repair.wait(wait); !st.Success() || !strings.Contains(repair.out.String(), "repaired: 2 records") {
		t.Fatalf("repair: %v\n%s", st, repair.out)
	}
	if st := runBin(t, nil, "store", "check", "--data-dir", dataDir).wait(wait); !st.Success() {
		t.Fatalf("check after repair: %v", st)
	}
	srv := startServe(t, dataDir, nil)
	dash := connect(t, srv.mqtt, "dashboard")
	dash.Subscribe("geofence/#")
	got := map[string]string{}
	for _, m := range dash.Sync() {
		tr := decode(t, "geofence", m)
		got[tr.Device] = tr.Type
	}
	if got["dev-a"] != "ENTER" || got["dev-b"] != "ENTER" {
		t.Fatalf("after repair: retained %v, want the older commit's (dev-a's EXIT lost)", got)
	}
}

// A record that still decodes but holds nonsense (the issue's: year 2058,
// ENTER turned DWELL) was restored as it was. Now serve refuses to start,
// naming the record and the repair command; check reports it and exits
// 1; repair sets it aside, and serve starts with the other devices' state.
func TestStoreRefusesAnImplausibleRecord(t *testing.T) {
	dataDir := t.TempDir()
	enterThenExit(t, dataDir)

	// dev-b's record edited by hand: a newer record of its topic, as
	// the store appends one, holding nonsense.
	st, err := store.Open(dataDir, store.Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var edited []byte
	var editErr error
	err = st.Retained("geofence/customer-alex/dev-b", func(m *storage.Message) {
		p := regexp.MustCompile(`"ts":\d+`).ReplaceAllString(string(m.Payload), `"ts":2786659200000`) // 2058-04-21
		m.Payload = []byte(strings.Replace(p, `"ENTER"`, `"DWELL"`, 1))
		edited, editErr = m.MarshalBinary()
	})
	if err = errors.Join(err, editErr); err == nil && edited == nil {
		err = errors.New("dev-b's record is not in the store")
	}
	if err == nil {
		err = st.Write([]store.Write{{Topic: "geofence/customer-alex/dev-b", Value: edited}})
	}
	if err := errors.Join(err, st.Close()); err != nil {
		t.Fatal(err)
	}

	refused := runBin(t, nil, "serve", "--mqtt-addr", "127.0.0.1:0", "--http-addr", "", "--data-dir", dataDir, "--fences", bundledFences)
	out := refused.wait(wait)
	if s := refused.out.String(); out.Success() || !strings.Contains(s, "geofence/customer-alex/dev-b") || !strings.Contains(s, "edgefence store repair --data-dir "+dataDir) {
		t.Fatalf("serve on a store with an implausible record: %v, want a refusal naming it and the repair command:\n%s", out, refused.out)
	}
	check := runBin(t, nil, "store", "check", "--data-dir", dataDir)
	if st := check.wait(wait); st.ExitCode() != 1 || !strings.Contains(check.out.String(), `implausible record "RET_geofence/customer-alex/dev-b"`) {
		t.Fatalf("store check: %v, want exit 1 naming dev-b's record:\n%s", st, check.out)
	}
	repair := runBin(t, nil, "store", "repair", "--data-dir", dataDir)
	if st := repair.wait(wait); !st.Success() || !strings.Contains(repair.out.String(), "repaired: 1 records") {
		t.Fatalf("repair: %v\n%s", st, repair.out)
	}
	srv := startServe(t, dataDir, nil)
	dash := connect(t, srv.mqtt, "dashboard")
	dash.Subscribe("geofence/#")
	got := dash.Sync()
	if len(got) != 1 || decode(t, "geofence", got[0]).Device != "dev-a" {
		t.Fatalf("after repair: %d retained transitions, want dev-a's EXIT alone", len(got))
	}
}
