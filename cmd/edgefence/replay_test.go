package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgefence/edgefence/replay"
)

// The replay of a live session's capture at the live hold commits exactly
// the transitions the live broker published: same device, fence, type and
// event time. The session reorders pings within the hold, sends one beyond
// it (late: reconciled into history, an ENTER and EXIT published as
// historic), and replay's diff shows what arrival order would have
// invented.
func TestReplayOfCaptureMatchesLiveTransitions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capture.jsonl")
	p := startServe(t, t.TempDir(), nil, "--hold", "100ms", "--capture", path)
	dash := connect(t, p.mqtt, "dashboard")
	dash.Subscribe("geofence/#")
	tracker := connect(t, p.mqtt, "tracker")
	t0 := time.Now().UnixMilli() - 60_000
	const dev = "replay-1"
	// Bursts arrive within a few ms, well inside the 100 ms hold; the
	// pauses are long past it, so live timers and replay agree on what
	// was buffered together.
	for _, burst := range [][]struct {
		in bool
		ts int64
	}{
		{{false, t0}},
		{{true, t0 + 2000}, {false, t0 + 1950}}, // reordered within the hold
		{{true, t0 + 3000}},
		{{false, t0 + 5000}, {true, t0 + 4950}}, // reordered within the hold
		{{false, t0 + 6000}},
		{{true, t0 + 5500}}, // 500 ms behind: late at a 100 ms hold
	} {
		for _, pg := range burst {
			lat, lon := outLat, outLon
			if pg.in {
				lat, lon = museumLat, museumLon
			}
			tracker.ping(dev, lat, lon, pg.ts)
		}
		time.Sleep(400 * time.Millisecond)
	}
	var live []string
	for range 4 { // the last two once the late ping's batch is reconciled, 3 s on
		live = append(live, decode(t, "geofence", dash.Next("the live and historic transitions")).String())
	}
	if extra := dash.Sync(); len(extra) > 0 {
		t.Errorf("%d more transitions than expected, the first on %s", len(extra), extra[0].Topic)
	}
	want := []string{
		fmt.Sprintf("ENTER zone-museumsinsel %s @%d", dev, t0+2000),
		fmt.Sprintf("EXIT zone-museumsinsel %s @%d", dev, t0+5000),
		fmt.Sprintf("ENTER zone-museumsinsel %s @%d (historic)", dev, t0+5500),
		fmt.Sprintf("EXIT zone-museumsinsel %s @%d (historic)", dev, t0+6000),
	}
	if !slices.Equal(live, want) {
		t.Errorf("live transitions %v, want %v", live, want)
	}
	if st := p.signal(syscall.SIGTERM, 2*wait); !st.Success() {
		t.Fatalf("serve exited with %v", st)
	}

	o := replay.DefaultOptions()
	o.Holds = []time.Duration{0, 100 * time.Millisecond}
	o.Fences = bundledFences
	o.Engine.MaxSpeed = 0 // as serve ran
	res, err := replay.Run(o, []string{path})
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	var replayed []string
	for _, tr := range res.Transitions[1] {
		replayed = append(replayed, transition{Device: tr.Device, Fence: tr.Fence, Type: tr.Type.String(), Ts: tr.Event / 1e6, Historic: tr.Historic}.String())
	}
	if !slices.Equal(replayed, live) {
		t.Errorf("replay at hold=100ms committed\n\t%s\nlive published\n\t%s", strings.Join(replayed, "\n\t"), strings.Join(live, "\n\t"))
	}
	if r := res.Rows[1]; r.Pings != 8 || r.Late != 1 || res.Read.Records != 8 || res.Read.Skipped != 0 {
		t.Errorf("hold=100ms: %d pings, %d late (read %+v); want 8 and 1", r.Pings, r.Late, res.Read)
	}

	var out bytes.Buffer
	if err := res.WriteTable(&out, 50); err != nil {
		t.Fatal(err)
	}
	at := func(ms int64) string { return replay.FormatTime(ms * 1e6) }
	for _, line := range []string{
		"hold=100ms vs arrival: 3 removed, 0 added",
		"- replay-1 zone-museumsinsel EXIT " + at(t0+1950),
		"- replay-1 zone-museumsinsel ENTER " + at(t0+3000),
		"- replay-1 zone-museumsinsel ENTER " + at(t0+4950),
	} {
		if !strings.Contains(out.String(), line+"\n") {
			t.Errorf("replay output lacks %q:\n%s", line, out.String())
		}
	}
}

// The CLI: flags after the files, the table and the diff on stdout, and
// --json as one object carrying the diff.
func TestReplayCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capture.jsonl")
	lines := []string{
		`{"seq":1,"device":"d","lat":52.50,"lon":13.30,"stamp":1796083200000000000,"event":1796083200000000000,"ingest":1796083200010000000}`,
		`{"seq":2,"device":"d","lat":52.52,"lon":13.40,"stamp":1796083202000000000,"event":1796083202000000000,"ingest":1796083202010000000}`,
		`{"seq":3,"device":"d","lat":52.50,"lon":13.30,"stamp":1796083201950000000,"event":1796083201950000000,"ingest":1796083202020000000}`,
		`{"seq":4,"device":"d","lat":52.52,"lon":13.4`,
	}
	writeFile(t, path, strings.Join(lines, "\n"))
	p := runBin(t, nil, "replay", path, "--holds", "0,100ms", "--speed-gate", "0", "--fences", bundledFences)
	if st := p.wait(2 * wait); !st.Success() {
		t.Fatalf("replay exited with %v:\n%s", st, p.out)
	}
	out := p.out.String()
	for _, want := range []string{
		"capture: 3 records of 1 devices from " + path,
		"skipped 1 unreadable lines",
		"strategy  transitions",
		"hold=100ms vs arrival: 1 removed, 0 added\n- d zone-museumsinsel EXIT 2026-12-01T00:00:01.950Z\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	p = runBin(t, nil, "replay", "--json", "--holds", "0,100ms", "--speed-gate", "0", "--diff-limit", "1", "--fences", bundledFences, path)
	if st := p.wait(2 * wait); !st.Success() {
		t.Fatalf("replay --json exited with %v:\n%s", st, p.out)
	}
	var doc struct {
		Run struct {
			Records int64 `json:"records"`
			Diffs   []struct {
				Strategy string `json:"strategy"`
				Removed  int    `json:"removed"`
				Lines    []struct {
					Op, Type string
				} `json:"lines"`
			} `json:"diffs"`
		} `json:"run"`
		Strategies []struct {
			Strategy    string `json:"strategy"`
			Transitions int64  `json:"transitions"`
		} `json:"strategies"`
	}
	if err := json.Unmarshal([]byte(p.out.String()), &doc); err != nil {
		t.Fatalf("--json output: %v\n%s", err, p.out)
	}
	if d := doc.Run.Diffs; doc.Run.Records != 3 || len(d) != 1 || d[0].Removed != 1 || len(d[0].Lines) != 1 || d[0].Lines[0].Op != "-" {
		t.Errorf("--json run: %+v", doc.Run)
	}
	if s := doc.Strategies; len(s) != 2 || s[0].Transitions != 2 || s[1].Transitions != 1 {
		t.Errorf("--json strategies: %+v", s)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
