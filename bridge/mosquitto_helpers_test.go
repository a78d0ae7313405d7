package bridge

import (
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgefence/edgefence/internal/syncbuf"
)

// mosquittoBin finds Debian's mosquitto (in /usr/sbin, often not on PATH)
// or skips the test (fails it under CI, which installs it).
func mosquittoBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/mosquitto"); err == nil {
		return "/usr/sbin/mosquitto"
	}
	if os.Getenv("CI") == "true" {
		// CI installs it (.ci/run): a skip there would hide a missing step.
		t.Fatal("mosquitto not installed under CI (Debian: apt-get install mosquitto)")
	}
	t.Skip("mosquitto not installed (Debian: apt-get install mosquitto): skipping the tests against a real Mosquitto")
	return ""
}

// mosquitto is a broker process the test owns.
type mosquitto struct {
	t    *testing.T
	bin  string
	dir  string
	conf string
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan struct{}

	// Mosquitto listens on the unix socket sock; front is the loopback
	// TCP address clients use, relayed to it (see relay).
	sock    string
	front   net.Listener
	relayed sync.WaitGroup
}

// startMosquitto starts Mosquitto behind a loopback port of its own, with
// persistence in a temp dir (saved only on SIGUSR1 and exit, so that a
// test decides what a SIGKILL loses), and stops it when the test ends.
func startMosquitto(t *testing.T, extra ...string) *mosquitto {
	t.Helper()
	m := &mosquitto{t: t, bin: mosquittoBin(t), dir: t.TempDir()}
	// A unix socket path is limited to 108 bytes: t.TempDir() with a long
	// test name is not.
	sockDir, err := os.MkdirTemp("", "mosq")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	m.sock = filepath.Join(sockDir, "mqtt.sock")
	if m.front, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	conf := []string{
		"listener 0 " + m.sock, // port 0 with a path: a unix socket
		"allow_anonymous true",
		"persistence true",
		"persistence_location " + m.dir + "/",
		"autosave_interval 0",
		"max_queued_messages 10000",
		"log_dest stderr",
		"log_type error",
		"log_type warning",
		"log_type notice",
		// As root, mosquitto would switch to user mosquitto, who cannot
		// write the test's temp dir; as anyone else this is ignored.
		"user " + u.Username,
	}
	conf = append(conf, extra...)
	m.conf = filepath.Join(m.dir, "mosquitto.conf")
	if err := os.WriteFile(m.conf, []byte(strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m.relayed.Add(1)
	go m.relay()
	t.Cleanup(func() {
		m.front.Close()
		if m.done != nil { // it started
			m.stop() // ends every relayed connection
		}
		m.relayed.Wait()
	})
	m.start()
	return m
}

// relay serves the test's TCP port for Mosquitto, which listens on a unix
// socket: Mosquitto cannot bind port 0 and say which port it got, and a
// port picked free and closed before Mosquitto binds it — again after
// every restart — may be taken in between by anything else on the box
// ("address already in use"). The test holds this listener from start to
// end, so the address stays the same across restarts. While Mosquitto is
// down a connection is accepted and closed at once, where a broker's own
// port would refuse it: to a client both are a failed connect.
func (m *mosquitto) relay() {
	defer m.relayed.Done()
	for {
		c, err := m.front.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("unix", m.sock)
		if err != nil {
			c.Close()
			continue
		}
		m.relayed.Add(2)
		go m.pipe(up, c)
		go m.pipe(c, up)
	}
}

// pipe copies src to dst until either ends, then closes both, so that the
// other direction ends too: a killed Mosquitto drops its clients.
func (m *mosquitto) pipe(dst, src net.Conn) {
	defer m.relayed.Done()
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

func (m *mosquitto) addr() string { return m.front.Addr().String() }
func (m *mosquitto) url() string  { return "mqtt://" + m.addr() }

// start runs the broker and waits until it accepts connections.
func (m *mosquitto) start() {
	m.t.Helper()
	m.out = &syncbuf.Buffer{}
	m.cmd = exec.Command(m.bin, "-c", m.conf)
	m.cmd.Stdout, m.cmd.Stderr = m.out, m.out
	if err := m.cmd.Start(); err != nil {
		m.t.Fatalf("start mosquitto: %v", err)
	}
	m.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(m.cmd, m.done)
	deadline := time.Now().Add(wait)
	for {
		c, err := net.DialTimeout("unix", m.sock, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-m.done:
			m.t.Fatalf("mosquitto exited at start:\n%s", m.out.String())
		default:
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("mosquitto not listening on %s after %v:\n%s", m.sock, wait, m.out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill stops the broker with SIGKILL: it saves nothing.
func (m *mosquitto) kill() {
	m.t.Helper()
	_ = m.cmd.Process.Signal(syscall.SIGKILL)
	<-m.done
}

// stop stops the broker with SIGTERM (it saves its database), if it runs.
func (m *mosquitto) stop() {
	select {
	case <-m.done:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(wait):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
	if m.t.Failed() {
		m.t.Logf("mosquitto output:\n%s", m.out.String())
	}
}

// save makes the broker write its database (SIGUSR1) and waits until the
// new file is in place: Mosquitto writes mosquitto.db.new and renames it.
func (m *mosquitto) save() {
	m.t.Helper()
	db := filepath.Join(m.dir, "mosquitto.db")
	before := inode(db)
	if err := m.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		m.t.Fatal(err)
	}
	eventually(m.t, "mosquitto to save its database", func() bool {
		ino := inode(db)
		return ino != 0 && ino != before
	})
}

func inode(path string) uint64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}
