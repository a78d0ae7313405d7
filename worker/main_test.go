package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/worker"
)

// roleEnv makes the test binary a worker: the cluster tests start their
// workers as processes of their own, so that kill -9 is a real one.
const roleEnv = "EDGEFENCE_WORKER_TEST_ROLE"

func TestMain(m *testing.M) {
	if os.Getenv(roleEnv) == "worker" {
		os.Exit(runWorker(os.Getenv("EDGEFENCE_WORKER_TEST_ARG")))
	}
	code := m.Run()
	if natsBin.dir != "" {
		os.RemoveAll(natsBin.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// natsBin is the nats-server binary the cluster tests run their NATS
// nodes with: a plain build of the version go.mod pins, as deployed. A
// node run by the race-built test binary was instrumented too, and its
// elections slowed by it; the race detector is for edgefence's code.
var natsBin struct {
	once      sync.Once
	dir, path string
	err       error
}

// natsServer returns the path of natsBin, built on first use.
func natsServer(t *testing.T) string {
	t.Helper()
	natsBin.once.Do(func() {
		if natsBin.dir, natsBin.err = os.MkdirTemp("", "edgefence-nats-"); natsBin.err != nil {
			return
		}
		natsBin.path = filepath.Join(natsBin.dir, "nats-server")
		out, err := exec.Command("go", "build", "-o", natsBin.path, "github.com/nats-io/nats-server/v2").CombinedOutput()
		if err != nil {
			natsBin.err = fmt.Errorf("go build nats-server: %w\n%s", err, out)
		}
	})
	if natsBin.err != nil {
		t.Fatal(natsBin.err)
	}
	return natsBin.path
}

// workerArgs is what a worker process of the tests is started with.
type workerArgs struct {
	NATS, MQTT, Name, Fences string
	Partitions               int
	Lease, Checkpoint        time.Duration
	HTTPAddr                 string
}

// httpLine starts the line on which a worker process tells the port its
// HTTP endpoints bound (it is started with port 0: a port picked by the
// test and released could be taken before the child binds it).
const httpLine = "worker http "

// runWorker runs a worker until SIGTERM.
func runWorker(arg string) int {
	var a workerArgs
	if err := json.Unmarshal([]byte(arg), &a); err != nil {
		fmt.Fprintln(os.Stderr, "worker args:", err)
		return 2
	}
	cfg := testConfig(a)
	w, err := worker.Start(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	if a := w.HTTPAddr(); a != "" {
		fmt.Println(httpLine + a) // the port it bound: see httpAddrOf
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "worker close:", err)
		return 1
	}
	return 0
}

// testConfig is the worker configuration of the tests: the defaults with
// a short lease and checkpoint period.
func testConfig(a workerArgs) worker.Config {
	cfg := worker.DefaultConfig()
	cfg.NATS, cfg.MQTT, cfg.Name, cfg.Fences = a.NATS, a.MQTT, a.Name, a.Fences
	cfg.Partitions, cfg.Lease, cfg.CheckpointEvery = a.Partitions, a.Lease, a.Checkpoint
	cfg.HTTPAddr = a.HTTPAddr
	cfg.DedupWindow = 2 * time.Minute
	cfg.PingsMaxAge = time.Hour
	cfg.Engine = engineConfig()
	return cfg
}

// engineConfig is the engine configuration of the tests, which the
// reference runs use too.
func engineConfig() engine.Config {
	e := engine.DefaultConfig()
	e.Shards = 1
	// The fixtures jump kilometres in a second, which the speed gate (on by
	// default) sets aside; the gate has tests of its own.
	e.MaxSpeed = 0
	return e
}
