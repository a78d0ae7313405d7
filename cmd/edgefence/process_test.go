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
