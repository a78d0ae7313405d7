package broker_test

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/edgefence/edgefence/internal/syncbuf"
)

// An idle keep-alive connection to the HTTP port is closed by the server
// after the idle timeout: thousands of them no longer hold descriptors
// the MQTT listener needs.
func TestHTTPIdleConnectionClosed(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTPIdleTimeout = 300 * time.Millisecond
	srv := start(t, cfg)
	conn := dialTCP(t, srv.HTTPAddr())
	r := bufio.NewReader(conn)
	if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("healthz: %d, close %v: want 200 on a kept connection", resp.StatusCode, resp.Close)
	}
	// Idle now: the server must close it (EOF), long before our deadline.
	conn.SetReadDeadline(time.Now().Add(wait))
	if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
		t.Fatalf("idle keep-alive connection: read %v, want EOF (closed by the server)", err)
	}
}

// HTTP connections past the bound wait until one closes, and are then
// served; reaching the bound is counted.
func TestHTTPConnectionBound(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTPMaxConns = 3
	srv := start(t, cfg)
	held := make([]net.Conn, 0, 3)
	defer func() { // before the server's close, which waits 5 s for a new connection's request
		for _, c := range held {
			c.Close()
		}
	}()
	for range 2 { // with the scrape below's, the bound
		held = append(held, dialTCP(t, srv.HTTPAddr()))
	}
	if v := metric(t, srv, "edgefence_http_connection_limit_reached_total"); v < 1 {
		t.Fatalf("edgefence_http_connection_limit_reached_total = %v after reaching the bound", v)
	}
	held[0].Close()
	if code, _ := httpGet(t, "http://"+srv.HTTPAddr()+"/healthz"); code != http.StatusOK {
		t.Fatalf("healthz after a connection closed: %d", code)
	}
}

// Reaching the HTTP connection bound is logged once a second at most,
// however often: 10 connections each reaching it, one after another, are
// one line (or one more for each second they took), and all counted.
func TestHTTPConnectionBoundLoggedOnceASecond(t *testing.T) {
	cfg := testConfig(t)
	cfg.HTTPMaxConns = 2
	var logs syncbuf.Buffer
	cfg.Log = slog.New(slog.NewTextHandler(&logs, nil))
	srv := start(t, cfg)
	// served is a connection the server has accepted: it answered on it.
	served := func() net.Conn {
		t.Helper()
		conn := dialTCP(t, srv.HTTPAddr())
		_ = conn.SetDeadline(time.Now().Add(wait))
		if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return conn
	}
	began := time.Now()
	held := served()
	const n = 10
	for range n {
		served().Close() // the second open connection: the bound
	}
	elapsed := time.Since(began)
	held.Close()
	if v := metric(t, srv, "edgefence_http_connection_limit_reached_total"); v < n {
		t.Errorf("edgefence_http_connection_limit_reached_total = %v after reaching the bound %d times", v, n)
	}
	lines := strings.Count(logs.String(), "HTTP connection limit reached")
	if limit := 1 + int(elapsed/time.Second) + 1; lines < 1 || lines > limit {
		t.Errorf("the bound reached %d times logged %d lines, want 1 to %d:\n%.2000s", n, lines, limit, logs.String())
	}
}

// With --auth, /metrics and pprof need an admin user (HTTP Basic, through
// the login gate MQTT logins pass); health and readiness stay open for
// probes. Without --auth, /metrics answers anyone, as before.
func TestMetricsNeedAdminUnderAuth(t *testing.T) {
	cfg := testConfig(t)
	cfg.Auth = writeUsers(t, aclUsers...)
	cfg.Pprof = true
	srv := start(t, cfg)
	base := "http://" + srv.HTTPAddr()
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/cmdline"} {
		resp := getAs(t, base+path, "", "")
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("anonymous %s: %d %q, want 401 asking for Basic", path, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
		if resp := getAs(t, base+path, "ops", "wrong"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s with a wrong password: %d, want 401", path, resp.StatusCode)
		}
		if resp := getAs(t, base+path, "wall", secret); resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s as a dashboard user: %d, want 403", path, resp.StatusCode)
		}
		if resp := getAs(t, base+path, "ops", secret); resp.StatusCode != http.StatusOK {
			t.Errorf("%s as admin: %d, want 200", path, resp.StatusCode)
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if resp := getAs(t, base+path, "", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("anonymous %s: %d, want 200 (probes have no credentials)", path, resp.StatusCode)
		}
	}

	open := start(t, testConfig(t))
	if resp := getAs(t, "http://"+open.HTTPAddr()+"/metrics", "", ""); resp.StatusCode != http.StatusOK {
		t.Errorf("/metrics without --auth: %d, want 200", resp.StatusCode)
	}
}

// Without --auth, the page answers only requests addressed to this
// machine: a Host naming another site (a DNS rebinding page's) gets 421;
// the loopback address and localhost are served.
func TestAnonymousPageChecksHost(t *testing.T) {
	cfg := testConfig(t)
	cfg.WSAddr = "127.0.0.1:0"
	srv := start(t, cfg)
	_, port, _ := net.SplitHostPort(srv.HTTPAddr())
	for _, tc := range []struct {
		host string
		want int
	}{
		{"evil.example", http.StatusMisdirectedRequest},
		{"evil.example:" + port, http.StatusMisdirectedRequest},
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"[::1]:" + port, http.StatusOK},
	} {
		for _, path := range []string{"/", "/api/fleet", "/api/config"} {
			req, err := http.NewRequest("GET", "http://"+srv.HTTPAddr()+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tc.host
			resp := do(t, req)
			if resp.StatusCode != tc.want {
				t.Errorf("GET %s with Host %s: %d, want %d", path, tc.host, resp.StatusCode, tc.want)
			}
		}
		// The anonymous MQTT-over-WebSocket upgrade, likewise.
		d := websocket.Dialer{Subprotocols: []string{"mqtt"}, HandshakeTimeout: wait}
		c, resp, err := d.Dial("ws://"+srv.WSAddr()+"/mqtt", http.Header{"Host": {tc.host}})
		if c != nil {
			c.Close()
		}
		switch {
		case tc.want == http.StatusOK && err != nil:
			t.Errorf("websocket with Host %s: %v, want an upgrade", tc.host, err)
		case tc.want != http.StatusOK && (resp == nil || resp.StatusCode != tc.want):
			t.Errorf("websocket with Host %s: %v %v, want %d", tc.host, resp, err, tc.want)
		}
	}
}

func getAs(t *testing.T, url, user, pass string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	return do(t, req)
}

// do sends req and returns its response with the body read and closed.
func do(t *testing.T, req *http.Request) *http.Response {
	t.Helper()
	resp, err := (&http.Client{Timeout: wait}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}
