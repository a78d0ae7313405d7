package dashboard_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/dashboard"
)

// sse is one server-sent event.
type sse struct{ name, data string }

// readEvents reads the page's event stream until n devices events have
// come (n ticks), and returns every event.
func readEvents(t *testing.T, url string, n int) []sse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait+time.Duration(n)*dashboard.DefaultTick)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []sse
	var cur sse
	devices := 0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[len("data: "):]
		case line == "" && cur.name != "":
			out = append(out, cur)
			if cur.name == "devices" {
				if devices++; devices == n {
					return out
				}
			}
			cur = sse{}
		}
	}
	t.Fatalf("the stream ended after %d events (%v), before %d devices events", len(out), sc.Err(), n)
	return nil
}

// A page that opens on a server with no device gets an empty list (not
// null, which the page cannot iterate) every tick, and the fences once:
// again only when the set changes.
func TestEventsSendAnEmptyListAndTheFencesOnce(t *testing.T) {
	srv := start(t, testConfig(t))
	events := readEvents(t, "http://"+srv.HTTPAddr()+"/events", 3)
	fences := 0
	for _, ev := range events {
		switch ev.name {
		case "fences":
			fences++
		case "devices":
			if ev.data != "[]" {
				t.Errorf("devices with no device: %s, want []", ev.data)
			}
		}
	}
	if fences != 1 {
		t.Errorf("the fences were sent %d times in 3 ticks of an unchanged set, want once", fences)
	}
}

// The browser's own request for /favicon.ico is answered, with the icon
// the page links.
func TestFaviconIsServed(t *testing.T) {
	srv := start(t, testConfig(t))
	c := http.Client{Timeout: wait}
	for _, path := range []string{"/favicon.ico", "/static/favicon.svg"} {
		resp, err := c.Get("http://" + srv.HTTPAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), "image/svg+xml") || !strings.Contains(string(body), "<svg") {
			t.Errorf("GET %s: %d %s, want 200 and the SVG icon", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
}
