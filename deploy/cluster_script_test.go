package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgefence/edgefence/internal/mqtttest"
)

// clusterScript is the newcomer's cluster (docs/scale-out.md, "Try it").
const clusterScript = "../scripts/cluster"

// TestClusterScript runs `scripts/cluster up` as a newcomer does (a state
// dir and a base port of its own), sends one ping that makes a device
// enter a fence of the bundled fences.geojson to a serve node over MQTT,
// receives that ENTER where the script says dashboards subscribe (another
// serve node), and
// checks that `up` again says it is up, that `down` stops every process
// it started and keeps the state dir, and that `down --clean` removes it.
func TestClusterScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds edgefence and nats-server and runs a 3-node cluster")
	}
	dir := filepath.Join(t.TempDir(), "cluster")
	base := freeBase(t)
	env := append(os.Environ(), "EDGEFENCE_CLUSTER_DIR="+dir, "EDGEFENCE_CLUSTER_PORT="+strconv.Itoa(base))
	script := func(timeout time.Duration, args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", append([]string{clusterScript}, args...)...)
		cmd.Env = env
		// The processes it starts write to their logs, not to this pipe:
		// CombinedOutput returns when the script does.
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// Whatever fails below, nothing the script started outlives the test:
	// down, and SIGKILL to what a broken down left running.
	var pids map[string]int
	t.Cleanup(func() {
		if out, err := script(2*time.Minute, "down"); err != nil {
			t.Errorf("cleanup: scripts/cluster down: %v\n%s", err, out)
		}
		for _, pid := range pids {
			if running(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(dir, "logs", "*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", filepath.Base(l), b)
			}
		}
	})

	// The first build of edgefence and nats-server may take minutes on a
	// busy box with a cold build cache.
	out, err := script(10*time.Minute, "up")
	if err != nil {
		t.Fatalf("scripts/cluster up: %v\n%s", err, out)
	}
	tracker := "127.0.0.1:" + strconv.Itoa(base+41)
	dashboard := "127.0.0.1:" + strconv.Itoa(base+43)
	for _, want := range []string{tracker, dashboard, "geofence/#", "mosquitto_pub", "mosquitto_sub", filepath.Join(dir, "logs"), "scripts/cluster down"} {
		if !strings.Contains(out, want) {
			t.Errorf("up's summary lacks %q:\n%s", want, out)
		}
	}
	pids = clusterPIDs(t, dir)
	if len(pids) != 6 {
		t.Fatalf("pid files %v, want 3 nats and 3 serve (which evaluate: no worker)", pids)
	}

	// Every node evaluates a share of the 16 partitions: nodes started
	// together each start their partitions (a read of the checkpoint
	// stream through a server that had not yet learnt its leader once
	// went unanswered for 30 s and the node exited).
	owned := make([]float64, 3)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		sum, each := 0.0, true
		for i := range owned {
			owned[i] = partitionsOwned("127.0.0.1:" + strconv.Itoa(base+51+i))
			sum += owned[i]
			each = each && owned[i] > 0
		}
		if sum == 16 && each {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("partitions owned by the three serve nodes: %v, want 16 shared by all", owned)
		}
	}

	// A dashboard on the last serve node, a tracker on the first: the
	// ping crosses the cluster, the ENTER comes from the bucket node 3
	// follows.
	got := make(chan mqtt.Message, 16)
	dash := mqtt.NewClient(mqtt.NewClientOptions().AddBroker("tcp://" + dashboard).SetClientID("dashboard").
		SetCleanSession(true).SetConnectTimeout(10 * time.Second))
	if tok := dash.Connect(); !tok.WaitTimeout(20*time.Second) || tok.Error() != nil {
		t.Fatalf("dashboard connect %s: %v", dashboard, tok.Error())
	}
	defer dash.Disconnect(100)
	if tok := dash.Subscribe("geofence/#", 1, func(_ mqtt.Client, m mqtt.Message) { got <- m }); !tok.WaitTimeout(20*time.Second) || tok.Error() != nil {
		t.Fatalf("dashboard subscribe: %v", tok.Error())
	}
	tr := mqtttest.Connect(t, tracker, "tracker", 10*time.Second)
	device := fmt.Sprintf("truck-%d", base)
	ts := time.Now().UnixMilli()
	if rc := tr.Publish("devices/"+device+"/telemetry", 1, fmt.Appendf(nil, `{"lat":52.52,"lon":13.40,"ts":%d}`, ts)); rc != 0 {
		t.Fatalf("PUBACK reason 0x%02x, want success (stored in the ping stream)", rc)
	}
	wantTopic := "geofence/zone-museumsinsel/" + device
	deadline := time.After(30 * time.Second)
	for entered := false; !entered; {
		select {
		case m := <-got:
			var body struct {
				Type, Device, Fence string
				Ts                  int64
			}
			if err := json.Unmarshal(m.Payload(), &body); err != nil {
				t.Fatalf("%s: not a transition: %v: %s", m.Topic(), err, m.Payload())
			}
			entered = m.Topic() == wantTopic && body.Type == "ENTER" && body.Device == device && body.Ts == ts
			if !entered {
				t.Logf("dashboard got %s %s (waiting for ENTER on %s)", m.Topic(), m.Payload(), wantTopic)
			}
		case <-deadline:
			t.Fatalf("no ENTER on %s at the dashboard within 30 s", wantTopic)
		}
	}
	dash.Disconnect(100)

	out, err = script(time.Minute, "up")
	if err != nil || !strings.Contains(out, "already up") {
		t.Errorf("up twice: %v, want it to say it is up:\n%s", err, out)
	}
	if again := clusterPIDs(t, dir); len(again) != len(pids) {
		t.Errorf("up twice: pid files %v, were %v", again, pids)
	}
	out, err = script(time.Minute, "status")
	if err != nil || strings.Count(out, "running") != 6 || strings.Contains(out, "not running") {
		t.Errorf("status: %v, want 6 running:\n%s", err, out)
	}

	out, err = script(2*time.Minute, "down")
	if err != nil {
		t.Fatalf("scripts/cluster down: %v\n%s", err, out)
	}
	for name, pid := range pids {
		if running(pid) {
			t.Errorf("%s (pid %d) still runs after down", name, pid)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "logs", "serve-1.log")); err != nil {
		t.Errorf("down removed the logs, want the state dir kept: %v", err)
	}
	if out, err = script(time.Minute, "down", "--clean"); err != nil {
		t.Fatalf("scripts/cluster down --clean: %v\n%s", err, out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("down --clean left %s (%v)", dir, err)
	}
}

// freeBase picks a base port whose cluster ports (base+1 … base+63) are
// free now; the script refuses taken ones, so a port taken in between
// fails the test with the script's message rather than a wrong cluster.
func freeBase(t *testing.T) int {
	t.Helper()
	for range 50 {
		base := 20000 + 100*rand.IntN(400)
		free := true
		for off := 0; off <= 60 && free; off += 10 {
			for i := 1; i <= 3; i++ {
				l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+off+i))
				if err != nil {
					free = false
					break
				}
				l.Close()
			}
		}
		if free {
			return base
		}
	}
	t.Fatal("no free range of ports for the cluster")
	return 0
}

// clusterPIDs reads the script's pid files: process name → pid.
func clusterPIDs(t *testing.T, dir string) map[string]int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "run", "*.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		pids[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
	}
	return pids
}

// running reports whether pid is a live process: a zombie (exited, not
// yet reaped by an init that may never reap) is not.
func running(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses, which may hold
	// spaces or parentheses itself.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// partitionsOwned reads edgefence_worker_partitions_owned from the
// /metrics at addr; -1 when it cannot.
func partitionsOwned(addr string) float64 {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(line, "edgefence_worker_partitions_owned "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}
