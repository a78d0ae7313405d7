package dashboard

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
)

type emptyFences struct{ noEngine }

func (emptyFences) Fences() *fence.Set {
	s, err := fence.Parse([]byte(`{"type":"FeatureCollection","features":[]}`))
	if err != nil {
		panic(err)
	}
	return s
}

// The event stream outlives the HTTP server's WriteTimeout (which bounds
// every other answer): it extends its write deadline per event.
func TestEventStreamOutlivesWriteTimeout(t *testing.T) {
	cfg := Config{TransitionPrefix: "geofence", LateTopic: "edgefence/late", RejectTopic: "edgefence/rejected", Tick: 50 * time.Millisecond}
	h, err := newHub(&cfg, emptyFences{}, feedFunc{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(h.serveEvents))
	srv.Config.WriteTimeout = 200 * time.Millisecond
	srv.Start()
	defer srv.Close()
	defer h.close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	began := time.Now()
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: devices") && time.Since(began) > 5*srv.Config.WriteTimeout {
			return // still streaming, long past the write timeout
		}
	}
	t.Fatalf("the stream ended after %v (%v), within 5 × the write timeout", time.Since(began), sc.Err())
}
