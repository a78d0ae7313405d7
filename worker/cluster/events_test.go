package cluster_test

import (
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"

	"github.com/edgefence/edgefence/internal/natstest"
	"github.com/edgefence/edgefence/internal/syncbuf"
	"github.com/edgefence/edgefence/worker/cluster"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLogEventsReportsToTheLog: a connection whose server goes away and
// comes back, and a subscription too slow for its messages, are reported
// as structured lines in the product's log (nats.go alone prints raw
// lines on stderr for the errors, and nothing for the losses).
func TestLogEventsReportsToTheLog(t *testing.T) {
	var buf syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	dir := t.TempDir()
	s, _ := natstest.Start(t, dir, "nats.conf", "listen: \"127.0.0.1:-1\"\n")
	port := s.Addr().(*net.TCPAddr).Port
	nc, err := nats.Connect(s.ClientURL(), append(cluster.LogEvents(log), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	waitFor := func(what string) {
		t.Helper()
		for try := 0; !strings.Contains(buf.String(), what); try++ {
			if try == 200 {
				t.Fatalf("no %q in the log:\n%s", what, buf.String())
			}
			time.Sleep(25 * time.Millisecond)
		}
	}

	release := make(chan struct{})
	defer close(release) // before nc.Close: the handler's goroutine ends
	sub, err := nc.Subscribe("slow", func(*nats.Msg) { <-release })
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.SetPendingLimits(1, -1); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := nc.Publish("slow", nil); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(`msg="NATS subscription error`)
	waitFor("subject=slow")

	s.Shutdown()
	s.WaitForShutdown()
	waitFor(`msg="NATS connection lost, reconnecting"`)
	natstest.Start(t, dir, "nats2.conf", fmt.Sprintf("listen: \"127.0.0.1:%d\"\n", port))
	waitFor(`msg="NATS connection back"`)
	_ = sub.Unsubscribe()
}
