package main

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// --memory-limit sets the Go runtime's soft memory limit, which /metrics
// reports (the memory alert compares against it).
func TestServeSetsTheMemoryLimit(t *testing.T) {
	p := startServe(t, t.TempDir(), nil, "--memory-limit", "300MiB")
	c := &http.Client{Timeout: wait}
	resp, err := c.Get("http://" + p.http + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("\ngo_memlimit_bytes %d\n", 300<<20); !strings.Contains(string(body), want) {
		t.Fatalf("/metrics has no %q:\n%s", strings.TrimSpace(want), body)
	}
}

// Sizes read back as written, so -h shows the defaults as a user would
// type them.
func TestByteSizeRoundTrip(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{"128MiB", "128MiB"}, {"1GiB", "1GiB"}, {"1024MiB", "1GiB"}, {"1536KiB", "1536KiB"}, {"1000", "1000"}, {"0", "0"},
	} {
		var n int64
		if err := (byteSize{&n}).Set(tc.in); err != nil {
			t.Fatalf("Set(%q): %v", tc.in, err)
		}
		if got := (byteSize{&n}).String(); got != tc.out {
			t.Errorf("Set(%q) reads back %q, want %q", tc.in, got, tc.out)
		}
	}
	var n int64
	for _, bad := range []string{"-1", "12MB", "lots"} {
		if err := (byteSize{&n}).Set(bad); err == nil {
			t.Errorf("Set(%q) accepted", bad)
		}
	}
}
