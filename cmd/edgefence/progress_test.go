package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgefence/edgefence/internal/syncbuf"
)

// smallSimulateArgs is a simulation of a few seconds' work.
var smallSimulateArgs = []string{"simulate", "--devices", "40", "--duration", "2m", "--fence-count", "50", "--workers", "2"}

// runToFiles runs the binary with stdout and stderr to files, as a
// script or CI redirects them, and returns what each got.
func runToFiles(t *testing.T, args ...string) (stdout, stderr string) {
	t.Helper()
	dir := t.TempDir()
	outF, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer outF.Close()
	errF, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errF.Close()
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv()
	cmd.Stdout, cmd.Stderr = outF, errF
	if err := cmd.Run(); err != nil {
		o, _ := os.ReadFile(errF.Name())
		t.Fatalf("edgefence %v: %v\n%s", args, err, o)
	}
	o, _ := os.ReadFile(outF.Name())
	e, _ := os.ReadFile(errF.Name())
	return string(o), string(e)
}

func hasTerminalControl(s string) bool { return strings.ContainsAny(s, "\r\x1b") }

// The status line goes to a terminal only: with stderr to a file (a
// script's redirect, CI's log), simulate and replay print nothing there,
// and stdout is the table or the JSON alone.
func TestSimulateAndReplayPrintNoProgressWhenStderrIsAFile(t *testing.T) {
	dir := t.TempDir()
	capturePath, fencesPath := filepath.Join(dir, "sim.jsonl"), filepath.Join(dir, "fences.geojson")
	out, errOut := runToFiles(t, append(smallSimulateArgs, "--capture", capturePath, "--write-fences", fencesPath)...)
	if errOut != "" || hasTerminalControl(out) || !strings.HasPrefix(out, "fleet: 40 devices") {
		t.Fatalf("simulate: stderr %q, stdout:\n%q", errOut, out)
	}
	out, errOut = runToFiles(t, append(smallSimulateArgs, "--json")...)
	if errOut != "" || !json.Valid([]byte(out)) {
		t.Fatalf("simulate --json: stderr %q, stdout:\n%q", errOut, out)
	}
	out, errOut = runToFiles(t, "replay", "--fences", fencesPath, capturePath)
	if errOut != "" || hasTerminalControl(out) || !strings.Contains(out, "arrival") {
		t.Fatalf("replay: stderr %q, stdout:\n%q", errOut, out)
	}
	out, errOut = runToFiles(t, "replay", "--fences", fencesPath, "--json", capturePath)
	if errOut != "" || !json.Valid([]byte(out)) {
		t.Fatalf("replay --json: stderr %q, stdout:\n%q", errOut, out)
	}
}

// On a real terminal (a pseudo-terminal from util-linux's script), the
// status line is drawn on stderr and erased before the table, and --json
// keeps it quiet.
func TestSimulateDrawsProgressOnATerminal(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("script (util-linux) is missing under CI")
		}
		t.Skip("no script(1) for a pseudo-terminal")
	}
	dir := t.TempDir()
	run := func(extra ...string) (tty, stdout string) {
		t.Helper()
		outPath := filepath.Join(dir, "stdout")
		line := bin + " " + strings.Join(append(append([]string{}, smallSimulateArgs...), extra...), " ") + " >" + outPath
		cmd := exec.Command(script, "-qefc", line, "/dev/null")
		cmd.Env = cleanEnv()
		var ttyOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &ttyOut, &ttyOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, ttyOut.String())
		}
		o, err := os.ReadFile(outPath)
		if err != nil {
			t.Fatal(err)
		}
		return ttyOut.String(), string(o)
	}
	tty, out := run()
	if !strings.Contains(tty, "\rsimulate [") || !strings.Contains(tty, "/40 devices") || !strings.HasSuffix(tty, "\r\x1b[K") {
		t.Fatalf("the terminal got %q", tty)
	}
	if hasTerminalControl(out) || !strings.HasPrefix(out, "fleet: 40 devices") {
		t.Fatalf("stdout %q", out)
	}
	if tty, out = run("--json"); tty != "" || !json.Valid([]byte(out)) {
		t.Fatalf("--json: the terminal got %q; stdout %q", tty, out)
	}
}

// simulate counts its devices on the status line it is given, and the
// table it prints is the same as without one.
func TestSimulateCountsDevicesOnItsStatusLine(t *testing.T) {
	var plain, withStatus bytes.Buffer
	o := smallSimulation(t)
	o.capture = ""
	if err := simulate(&plain, o); err != nil {
		t.Fatal(err)
	}
	status := new(syncbuf.Buffer)
	o.status = status
	if err := simulate(&withStatus, o); err != nil {
		t.Fatal(err)
	}
	s := status.String()
	if !strings.HasPrefix(s, "\rsimulate [") || !strings.Contains(s, "/60 devices") || !strings.HasSuffix(s, "\r\x1b[K") {
		t.Fatalf("status %q", s)
	}
	// The wall-clock figures differ between runs; the table's rows do not.
	cut := func(s string) string { return s[strings.Index(s, "\n\n"):] }
	tableOnly := func(s string) string {
		var keep []string
		for _, l := range strings.Split(cut(s), "\n") {
			if f := strings.Fields(l); len(f) > 1 {
				keep = append(keep, strings.Join(f[:len(f)-1], " ")) // the last column is pings/s
			}
		}
		return strings.Join(keep, "\n")
	}
	if tableOnly(plain.String()) != tableOnly(withStatus.String()) {
		t.Fatalf("the status line changed the table:\n%s\nvs\n%s", plain.String(), withStatus.String())
	}
}

// loadgen keeps its log lines (a script reads them) but draws no status
// line into a file, and --json leaves stdout JSON alone.
func TestLoadgenPrintsNoProgressWhenStderrIsAFile(t *testing.T) {
	p := startServe(t, t.TempDir(), nil)
	args := []string{"loadgen", "--addr", p.mqtt, "--conns", "2", "--rate", "200", "--warmup", "0s",
		"--duration", "600ms", "--drain", "200ms", "--sub", "", "--fences", "10"}
	out, errOut := runToFiles(t, args...)
	if hasTerminalControl(errOut) || !strings.Contains(errOut, "loadgen: connected 2") || hasTerminalControl(out) {
		t.Fatalf("loadgen: stderr %q, stdout %q", errOut, out)
	}
	out, errOut = runToFiles(t, append(args, "--json")...)
	if hasTerminalControl(errOut) || !json.Valid([]byte(out)) {
		t.Fatalf("loadgen --json: stderr %q, stdout %q", errOut, out)
	}
}
