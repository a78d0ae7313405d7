package suite

import (
	"context"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/internal/syncbuf"
	"github.com/edgefence/edgefence/loadgen/probe"
)

func mosquittoBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		t.Skip("no mosquitto in PATH (.ci/run installs it)")
	}
	return bin
}

// owns reports whether p holds the listener on its MQTT address.
func owns(t *testing.T, p *process) bool {
	t.Helper()
	_, port, _ := net.SplitHostPort(p.mqtt)
	n, _ := strconv.Atoi(port)
	ok, err := probe.Listens(p.cmd.Process.Pid, n)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// A port taken between the pick and Mosquitto's bind costs a start, not
// the run: Mosquitto is started again on a fresh port. The one holding the
// taken port accepts connections, but is not taken for Mosquitto.
func TestMosquittoStartsAgainWhenItsPortIsTaken(t *testing.T) {
	var log syncbuf.Buffer
	s := &Suite{Mosquitto: mosquittoBin(t), Log: &log}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	picks := 0
	pick := func() (string, error) {
		picks++
		if picks == 1 {
			return taken.Addr().String(), nil
		}
		return freeAddr()
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p, err := s.startMosquitto(ctx, filepath.Join(t.TempDir(), "mosquitto.log"), pick)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	if picks != 2 || p.mqtt == taken.Addr().String() || !owns(t, p) {
		t.Errorf("%d picks, serving on %s (the taken port %s), its own listener: %v", picks, p.mqtt, taken.Addr(), owns(t, p))
	}
	if !strings.Contains(log.String(), "was taken before it could bind it") {
		t.Errorf("the retry is not logged: %q", log.String())
	}
}

// A port that stays taken ends the start after bindAttempts tries, with
// Mosquitto's error.
func TestMosquittoGivesUpOnATakenPort(t *testing.T) {
	s := &Suite{Mosquitto: mosquittoBin(t)}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	picks := 0
	pick := func() (string, error) { picks++; return taken.Addr().String(), nil }
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	p, err := s.startMosquitto(ctx, filepath.Join(t.TempDir(), "mosquitto.log"), pick)
	if err == nil {
		p.stop()
		t.Fatal("started on a taken port")
	}
	if picks != bindAttempts || !strings.Contains(err.Error(), "exited") {
		t.Errorf("%d picks, %v; want %d and its exit", picks, err, bindAttempts)
	}
}

// edgefence binds port 0; the suite reads the ports it got from its log
// and waits until it is ready there.
func TestEdgefenceStartsOnPortZero(t *testing.T) {
	if testing.Short() {
		t.Skip("builds edgefence")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "edgefence")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/edgefence/edgefence/cmd/edgefence").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	s := &Suite{Bin: bin}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	edge := brokerSpec{name: "edgefence (engine on)", kind: kindEdgefence, hold: 500 * time.Millisecond}
	p, err := s.startEdgefence(ctx, edge, "../../fences.geojson", "", filepath.Join(dir, "edgefence.log"), false)
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	if strings.HasSuffix(p.mqtt, ":0") || strings.HasSuffix(p.http, ":0") || !owns(t, p) || !ready(ctx, "http://"+p.http+"/readyz") {
		t.Errorf("serving on %s and %s: own listener %v", p.mqtt, p.http, owns(t, p))
	}
}
