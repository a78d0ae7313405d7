package subjects

import (
	"testing"

	"github.com/edgefence/edgefence/ingest"
)

// TestPingSubjectAllocations guards the ingest's per-ping cost: a ping's
// subject is a few strings, not a string replacer built for each ping
// (which was a tenth of a serve --cluster node's CPU; docs/scale-out.md,
// "Capacity").
func TestPingSubjectAllocations(t *testing.T) {
	tf, err := ingest.ParseTelemetryFilters(DefaultTelemetryFilters)
	if err != nil {
		t.Fatal(err)
	}
	const topic = "devices/truck-42/telemetry"
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := PingSubject(tf, topic, 16); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 8 {
		t.Errorf("PingSubject: %.0f allocations a ping, want at most 8", allocs)
	}
}

func BenchmarkPingSubject(b *testing.B) {
	tf, err := ingest.ParseTelemetryFilters(DefaultTelemetryFilters)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := PingSubject(tf, "devices/truck-42/telemetry", 16); err != nil {
			b.Fatal(err)
		}
	}
}
