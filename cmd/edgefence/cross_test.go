package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgefence/edgefence/internal/syncbuf"
)

// TestCrossBuiltBinariesRunUnderEmulation runs the arm64 and armv7 release
// binaries (scripts/build) under QEMU user-mode emulation: serve the bundled
// fences, publish a ping that enters a fence, read the retained ENTER back,
// stop. A binary that only compiles is not a shipped binary. It needs the
// dist directory in EDGEFENCE_CROSS_DIR (CI sets it after scripts/build), so
// the default test run stays fast.
func TestCrossBuiltBinariesRunUnderEmulation(t *testing.T) {
	dist := os.Getenv("EDGEFENCE_CROSS_DIR")
	if dist == "" {
		t.Skip("set EDGEFENCE_CROSS_DIR to scripts/build's dist/ to run the release binaries under QEMU (CI does)")
	}
	for _, tc := range []struct{ binary, qemu string }{
		{"edgefence-linux-arm64", "qemu-aarch64"},
		{"edgefence-linux-armv7", "qemu-arm"},
	} {
		t.Run(tc.binary, func(t *testing.T) {
			emu, err := exec.LookPath(tc.qemu + "-static")
			if err != nil {
				if emu, err = exec.LookPath(tc.qemu); err != nil {
					t.Fatalf("EDGEFENCE_CROSS_DIR is set but neither %s-static nor %s is installed (apt-get install qemu-user-static)", tc.qemu, tc.qemu)
				}
			}
			binary, _ := filepath.Abs(filepath.Join(dist, tc.binary))
			out, err := exec.Command(emu, binary, "version").CombinedOutput()
			if err != nil || !strings.Contains(string(out), "edgefence") {
				t.Fatalf("%s version: %v: %s", tc.binary, err, out)
			}
			p := &proc{t: t, out: new(syncbuf.Buffer), done: make(chan struct{})}
			p.cmd = exec.Command(emu, binary, "serve", "--mqtt-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
				"--data-dir", t.TempDir(), "--fences", bundledFences, "--hold", "100ms")
			p.cmd.Env = cleanEnv()
			p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
			if err := p.cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { _ = p.cmd.Wait(); p.state = p.cmd.ProcessState; close(p.done) }()
			t.Cleanup(func() {
				select {
				case <-p.done:
				default:
					_ = p.cmd.Process.Kill()
					<-p.done
				}
				if t.Failed() {
					t.Logf("%s output:\n%s", tc.binary, p.out)
				}
			})
			a := p.waitLog("edgefence serving")
			p.mqtt, p.http = a["mqtt"], a["http"]
			p.waitReady()
			tracker := connect(t, p.mqtt, "tracker")
			tracker.ping("pi-1", museumLat, museumLon, time.Now().UnixMilli())
			dash := connect(t, p.mqtt, "dash")
			deadline := time.Now().Add(2 * wait)
			for {
				// Subscribed before the hold ended, the dashboard gets the
				// transition live (not flagged retained); subscribing again
				// then brings the retained copy.
				dash.Subscribe("geofence/+/pi-1")
				if got := dash.Sync(); len(got) > 0 && got[len(got)-1].Retain {
					if tr := decode(t, "geofence", got[len(got)-1]); tr.Type != "ENTER" || tr.Fence != "zone-museumsinsel" {
						t.Fatalf("retained %s, want the ENTER of zone-museumsinsel", tr)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("no retained ENTER for pi-1")
				}
				time.Sleep(50 * time.Millisecond) // the hold, under emulation
			}
			if st := p.signal(syscall.SIGTERM, 2*wait); !st.Success() {
				t.Fatalf("exit after SIGTERM: %v", st)
			}
		})
	}
}
