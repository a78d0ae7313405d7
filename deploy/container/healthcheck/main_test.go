package main

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	var notReady atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if notReady.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	}))
	defer srv.Close()
	if err := check(srv.URL, time.Second); err != nil {
		t.Fatalf("ready server: %v", err)
	}
	notReady.Store(true)
	if err := check(srv.URL, time.Second); err == nil {
		t.Fatal("503 passed the check")
	}
	srv.Close()
	if err := check(srv.URL, time.Second); err == nil {
		t.Fatal("a closed server passed the check")
	}
}
