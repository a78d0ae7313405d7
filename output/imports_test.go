package output_test

import (
	"os/exec"
	"strings"
	"testing"
)

// Every output user (the bridge's queue, the worker, the dashboards'
// tests) imports output for its payloads and topics; the engine and the
// ingest path are not theirs to build and link.
func TestOutputDoesNotPullInTheEngine(t *testing.T) {
	// go test puts its own go first on PATH.
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	const mod = "github.com/edgefence/edgefence/"
	for _, pkg := range strings.Fields(string(out)) {
		switch strings.TrimPrefix(pkg, mod) {
		case "ingest", "evaluator", "evaluator/sharded", "evaluator/fence":
			t.Errorf("output depends on %s", pkg)
		}
		if strings.Contains(pkg, "mochi-mqtt") {
			t.Errorf("output depends on %s", pkg)
		}
	}
}
