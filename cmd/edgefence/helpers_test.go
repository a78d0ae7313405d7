package main

// Subprocess tests: the edgefence binary, built once, run as an operator
// runs it, driven over real MQTT and HTTP on 127.0.0.1.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"

	"github.com/edgefence/edgefence/internal/mqtttest"
	"github.com/edgefence/edgefence/internal/slogtext"
	"github.com/edgefence/edgefence/internal/syncbuf"
)

// wait bounds every wait for the broker.
const wait = 5 * time.Second

// bin is the edgefence binary built by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "edgefence-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "edgefence")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building edgefence:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Positions, checked against ../../fences.geojson.
const (
	museumLat, museumLon = 52.52, 13.40     // inside only zone-museumsinsel
	outLat, outLon       = 52.50, 13.30     // inside no fence
	alexLat, alexLon     = 52.5219, 13.4132 // centre of customer-alex
)

const bundledFences = "../../fences.geojson"

// proc is one running `edgefence serve`.
type proc struct {
	t          *testing.T
	cmd        *exec.Cmd
	out        *syncbuf.Buffer
	done       chan struct{} // closed when the process has exited
	state      *os.ProcessState
	mqtt, http string
}

// cleanEnv is the test's environment without EDGEFENCE_* variables, plus env.
func cleanEnv(env ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EDGEFENCE_") {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}

// runBin starts the binary with args and env and returns without waiting.
func runBin(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, out: new(syncbuf.Buffer), done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = cleanEnv(env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", args, err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.state = p.cmd.ProcessState
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("edgefence %s output:\n%s", strings.Join(args, " "), p.out)
		}
	})
	return p
}

// startServe starts `edgefence serve` with dataDir and the bundled fences,
// plus extra flags, and waits until /readyz says 200. Its listeners bind
// port 0 and the test reads the ports from its log: a port picked free
// and closed before the child binds it may be taken in between.
func startServe(t *testing.T, dataDir string, env []string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"serve",
		"--mqtt-addr", "127.0.0.1:0",
		"--http-addr", "127.0.0.1:0",
		"--data-dir", dataDir,
		"--fences", bundledFences,
		"--log-level", "debug",
		// The fixtures jump kilometres in a second, which the speed
		// gate (on by default) sets aside; the gate has tests of its own.
		"--speed-gate", "0",
	}, extra...)
	p := runBin(t, env, args...)
	a := p.waitLog("edgefence serving")
	p.mqtt, p.http = a["mqtt"], a["http"]
	p.waitReady()
	return p
}

// waitLog waits until the process logs a message beginning with msg and
// returns that line's attributes, failing if it exits or 10 s pass.
func (p *proc) waitLog(msg string) map[string]string {
	p.t.Helper()
	deadline := time.Now().Add(2 * wait)
	for {
		if a, ok := slogtext.Find(p.out.String(), msg); ok {
			return a
		}
		select {
		case <-p.done:
			p.t.Fatalf("edgefence exited (%v) before logging %q:\n%s", p.state, msg, p.out)
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("edgefence did not log %q within %v:\n%s", msg, 2*wait, p.out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitReady polls /readyz until 200, failing if the process exits or
// 10 s pass.
func (p *proc) waitReady() {
	p.t.Helper()
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(2 * wait)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			p.t.Fatalf("edgefence exited before ready (%v):\n%s", p.state, p.out)
		default:
		}
		if resp, err := c.Get("http://" + p.http + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("edgefence not ready within %v:\n%s", 2*wait, p.out)
}

// waitMetric polls /metrics until the sample named series (name and
// labels, exactly as exposed) reads value, failing after 10 s.
func (p *proc) waitMetric(series string, value float64) {
	p.t.Helper()
	c := &http.Client{Timeout: time.Second}
	want := fmt.Sprintf("%s %g\n", series, value)
	deadline := time.Now().Add(2 * wait)
	for time.Now().Before(deadline) {
		if resp, err := c.Get("http://" + p.http + "/metrics"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), want) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("%s did not reach %g within %v", series, value, 2*wait)
}

// signal sends sig and waits up to timeout for the process to exit.
func (p *proc) signal(sig os.Signal, timeout time.Duration) *os.ProcessState {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
	return p.wait(timeout)
}

// wait waits up to timeout for the process to exit.
func (p *proc) wait(timeout time.Duration) *os.ProcessState {
	p.t.Helper()
	select {
	case <-p.done:
		return p.state
	case <-time.After(timeout):
		p.t.Fatalf("edgefence still running %v later:\n%s", timeout, p.out)
		return nil
	}
}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	c := &http.Client{Timeout: wait}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// ---- MQTT 5 ----

// client is the tests' MQTT 5 client (internal/mqtttest). It subscribes
// without retain-as-published: the retain flag then marks a retained
// message replayed on subscription, not a live one.
type client struct{ *mqtttest.Client }

// connect connects an MQTT 5 client; it subscribes to a barrier topic of
// its own (see Sync).
func connect(t *testing.T, addr, name string) *client {
	t.Helper()
	return &client{mqtttest.Connect(t, addr, name, wait)}
}

// publish publishes at QoS 1.
func (cl *client) publish(topic string, payload []byte) {
	cl.T.Helper()
	cl.Publish(topic, 1, payload)
}

// ping publishes a canonical ping at QoS 1.
func (cl *client) ping(device string, lat, lon float64, tsMs int64) {
	cl.T.Helper()
	cl.publish("devices/"+device+"/telemetry", fmt.Appendf(nil, `{"lat":%v,"lon":%v,"ts":%d}`, lat, lon, tsMs))
}

// transition is the part of a transition payload these tests check.
type transition struct {
	Device string `json:"device"`
	Fence  string `json:"fence"`
	Type   string `json:"type"`
	Ts     int64  `json:"ts"`
	// Historic is set on a transition late pings revealed.
	Historic bool `json:"historic"`

	retained bool
}

// String is "TYPE fence device @ts", plus " (retained)" for a retained
// delivery.
func (tr transition) String() string {
	s := fmt.Sprintf("%s %s %s @%d", tr.Type, tr.Fence, tr.Device, tr.Ts)
	if tr.Historic {
		s += " (historic)"
	}
	if tr.retained {
		s += " (retained)"
	}
	return s
}

func decode(t *testing.T, prefix string, m *paho.Publish) transition {
	t.Helper()
	var tr transition
	if err := json.Unmarshal(m.Payload, &tr); err != nil {
		t.Fatalf("%s: not a transition: %v: %s", m.Topic, err, m.Payload)
	}
	if want := prefix + "/" + tr.Fence + "/" + tr.Device; m.Topic != want {
		t.Fatalf("transition %s on %s, want topic %s", tr, m.Topic, want)
	}
	tr.retained = m.Retain
	return tr
}

// isKilled reports whether the process died of SIGKILL.
func isKilled(st *os.ProcessState) bool {
	ws, ok := st.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
