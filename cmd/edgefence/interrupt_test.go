package main

import (
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A long simulation stops on SIGTERM or Ctrl-C as any command-line tool
// does: main's signal context used to swallow both, and only SIGKILL
// stopped it.
func TestSimulateStopsOnASignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := exec.Command(bin, "simulate", "--devices", "40000", "--json")
		cmd.Env = cleanEnv()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // past start-up, into the run
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 130 || !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("%v: %v, stderr %q; want exit 130 saying interrupted", sig, err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("%v: simulate still running 10 s after the signal", sig)
		}
	}
}
