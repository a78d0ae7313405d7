package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"golang.org/x/sys/unix"

	"github.com/edgefence/edgefence/internal/mqtttest"
	"github.com/edgefence/edgefence/internal/slogtext"
)

// A burst of connections past the server's open-file limit made Accept
// fail once with EMFILE, and mochi's accept loop ended for good: MQTT was
// unreachable until a restart, /readyz said 200 and nothing was logged.
// Now the listener waits and accepts again, /readyz is 503 (naming the
// error) while it cannot, and a client connects once the burst is gone.
func TestFDExhaustionDoesNotKillTheMQTTListener(t *testing.T) {
	const limit, burst = 256, 300
	p := startServe(t, t.TempDir(), nil)

	// One HTTP connection opened before the burst, kept alive: the server
	// cannot accept a new one while it is out of file descriptors.
	hc, err := net.Dial("tcp", p.http)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	hr := bufio.NewReader(hc)
	get := func(path string) (int, string) {
		t.Helper()
		_ = hc.SetDeadline(time.Now().Add(wait))
		if _, err := io.WriteString(hc, "GET "+path+" HTTP/1.1\r\nHost: "+p.http+"\r\n\r\n"); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp, err := http.ReadResponse(hr, nil)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	readyz := func() (int, string) { return get("/readyz") }
	if code, body := readyz(); code != http.StatusOK {
		t.Fatalf("/readyz before the burst: %d %s", code, body)
	}

	pid := p.cmd.Process.Pid
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: limit}, nil); err != nil {
		t.Fatalf("lower the server's open-file limit: %v", err)
	}
	var raw []net.Conn
	defer func() {
		for _, c := range raw {
			c.Close()
		}
	}()
	for range burst {
		c, err := net.DialTimeout("tcp", p.mqtt, wait)
		if err != nil {
			t.Fatalf("raw connection %d: %v", len(raw)+1, err)
		}
		raw = append(raw, c)
	}

	// While the server is out of descriptors, /readyz says why.
	refused := ""
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if code, body := readyz(); code == http.StatusServiceUnavailable {
			refused = body
			break
		}
	}
	if refused == "" {
		t.Errorf("/readyz stayed 200 for %v with %d connections past a limit of %d open files", wait, burst, limit)
	} else if !strings.Contains(refused, "too many open files") {
		t.Errorf("/readyz 503 does not name the error: %q", refused)
	}

	for _, c := range raw {
		c.Close()
	}
	raw = nil
	conn, err := net.DialTimeout("tcp", p.mqtt, wait)
	if err != nil {
		t.Fatal(err)
	}
	cp := &paho.Connect{ClientID: mqtttest.ID("after-burst"), KeepAlive: 30, CleanStart: true}
	if _, ca, err := mqtttest.Dial(t, conn, cp, 2*time.Second); err != nil {
		t.Fatalf("a client could not connect within 2s of the burst's end: %v (%+v)", err, ca)
	}

	ready := false
	for deadline := time.Now().Add(wait); !ready && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		code, _ := readyz()
		ready = code == http.StatusOK
	}
	if !ready {
		t.Errorf("/readyz not 200 again within %v of accepting again", wait)
	}
	if a, ok := slogtext.Find(p.out.String(), "MQTT listener cannot accept connections"); !ok {
		t.Errorf("the accept error was not logged:\n%s", p.out)
	} else if !strings.Contains(a["error"], "too many open files") {
		t.Errorf("the log line does not name the error: %v", a)
	}
	_, metrics := get("/metrics")
	if !regexp.MustCompile(`(?m)^edgefence_accept_errors_total\{listener="tcp"\} [1-9]`).MatchString(metrics) {
		t.Errorf("edgefence_accept_errors_total{listener=\"tcp\"} did not count the errors")
	}
}
