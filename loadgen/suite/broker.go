package suite

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/edgefence/edgefence/internal/slogtext"
	"github.com/edgefence/edgefence/loadgen/probe"
)

// startTimeout bounds a broker's start: its listeners bound and, with a
// metrics URL, /readyz answering 200.
const startTimeout = 20 * time.Second

// bindAttempts bounds Mosquitto's starts on fresh ports when the port
// picked for it was taken before it could bind it.
const bindAttempts = 5

// process is a broker the suite started, logging to its log file.
type process struct {
	cmd        *exec.Cmd
	log        *os.File
	done       chan struct{} // closed when it exited; err is then its exit
	err        error
	mqtt, http string // the addresses it serves ("": no HTTP)
}

// spawn starts argv (pinned to the broker CPU) with its output in a new
// file at logPath.
func (s *Suite) spawn(argv []string, logPath string) (*process, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	if s.BrokerCPU != "" {
		argv = append([]string{"taskset", "-c", s.BrokerCPU}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "GOGC=") // the broker's own defaults
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &process{cmd: cmd, log: logf, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	return p, nil
}

// stop ends the broker with SIGTERM, or SIGKILL after 15 s, and closes
// its log.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	p.log.Close()
}

// startEdgefence starts edgefence on port 0 and reads the addresses it
// bound from its log: a port picked free and closed before the broker
// binds it may be taken in between ("address already in use"). The log is
// at info for that line; edgefence logs at info only when it starts,
// reloads and stops, never per connection or ping.
func (s *Suite) startEdgefence(ctx context.Context, b brokerSpec, fencesPath, dataDir, logPath string, pprof bool) (*process, error) {
	p, err := s.spawn(s.serveArgv(b, fencesPath, dataDir, pprof), logPath)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(startTimeout)
	for {
		out, _ := os.ReadFile(logPath)
		if a, ok := slogtext.Find(string(out), "edgefence serving"); ok {
			p.mqtt, p.http = a["mqtt"], a["http"]
			break
		}
		select {
		case <-p.done:
			p.stop()
			return nil, fmt.Errorf("exited before serving: %v", p.err)
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("did not log its addresses within %v", startTimeout)
		}
	}
	if err := waitReady(ctx, p, "http://"+p.http+"/metrics"); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// startMosquitto starts Mosquitto on a loopback port pick chooses.
// Mosquitto cannot bind port 0 and say which port it got, so the port is
// picked free and closed first, and another process may take it before
// Mosquitto binds it: Mosquitto then exits with "Address already in use",
// and is started again on a fresh port, bindAttempts times at most.
func (s *Suite) startMosquitto(ctx context.Context, logPath string, pick func() (string, error)) (*process, error) {
	conf := filepath.Join(filepath.Dir(logPath), "mosquitto.conf")
	for attempt := 1; ; attempt++ {
		addr, err := pick()
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(conf, []byte(mosquittoConf(addr)), 0o644); err != nil {
			return nil, err
		}
		p, err := s.spawn([]string{s.Mosquitto, "-c", conf}, logPath)
		if err != nil {
			return nil, err
		}
		p.mqtt = addr
		err = waitReady(ctx, p, "")
		if err == nil {
			return p, nil
		}
		p.stop()
		out, _ := os.ReadFile(logPath)
		if attempt == bindAttempts || !strings.Contains(string(out), "Address already in use") {
			return nil, err
		}
		s.logf("mosquitto: %s was taken before it could bind it; starting it again on another port", addr)
	}
}

// freeAddr picks a loopback address with a port free now; see
// startMosquitto for why that is not enough on its own.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitReady waits until p holds its MQTT listener (not merely: someone
// accepts on its address) and, with a metrics URL, answers /readyz, for
// startTimeout at most.
func waitReady(ctx context.Context, p *process, metricsURL string) error {
	_, portStr, err := net.SplitHostPort(p.mqtt)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("exited: %v", p.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if own, _ := probe.Listens(p.cmd.Process.Pid, port); !own {
			continue
		}
		if metricsURL == "" {
			return nil
		}
		if ready(ctx, strings.TrimSuffix(metricsURL, "/metrics")+"/readyz") {
			return nil
		}
	}
	return errors.New("not ready within 20s")
}

// ready reports whether url answers 200 within a second.
func ready(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
