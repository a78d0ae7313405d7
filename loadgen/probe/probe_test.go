package probe

import (
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	m, err := ParseMetrics(strings.NewReader("# HELP x\nedgefence_pings_received_total 12\nedgefence_shed_total{stage=\"queue\"} 3\ngo_gc_cpu_seconds_total 0.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m["edgefence_pings_received_total"] != 12 || m[`edgefence_shed_total{stage="queue"}`] != 3 || !m.Has("go_gc_cpu_seconds_total") {
		t.Errorf("parsed %v", m)
	}
}
