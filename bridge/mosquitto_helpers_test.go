package bridge

// mosquittoBin finds Debian's mosquitto (in /usr/sbin, often not on PATH)
// or skips the test.
import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgefence/edgefence/internal/syncbuf"
)

func mosquittoBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("mosquitto"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/mosquitto"); err == nil {
		return "/usr/sbin/mosquitto"
	}
	t.Skip("mosquitto not installed (Debian: apt-get install mosquitto): skipping the tests against a real Mosquitto")
	return ""
}

// mosquitto is a broker process the test owns.
type mosquitto struct {
	t    *testing.T
	bin  string
	dir  string
	port int
	conf string
	cmd  *exec.Cmd
	out  *syncbuf.Buffer
	done chan struct{}
}

// startMosquitto starts Mosquitto on a free loopback port, with
// persistence in a temp dir (saved only on SIGUSR1 and exit, so that a
// test decides what a SIGKILL loses), and stops it when the test ends.
func startMosquitto(t *testing.T, extra ...string) *mosquitto {
	t.Helper()
	m := &mosquitto{t: t, bin: mosquittoBin(t), dir: t.TempDir(), port: freePort(t)}
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	conf := []string{
		fmt.Sprintf("listener %d 127.0.0.1", m.port),
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
	m.start()
	t.Cleanup(m.stop)
	return m
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func (m *mosquitto) addr() string { return fmt.Sprintf("127.0.0.1:%d", m.port) }
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
		c, err := net.DialTimeout("tcp", m.addr(), time.Second)
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
			m.t.Fatalf("mosquitto not listening on %s after %v:\n%s", m.addr(), wait, m.out.String())
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
