package bridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/eclipse/paho.golang/autopaho"

	"github.com/edgefence/edgefence/bridge/queue"
	"github.com/edgefence/edgefence/evaluator/sharded"
	"github.com/edgefence/edgefence/evaluator/stats"
	"github.com/edgefence/edgefence/fencefile"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/ops"
)

// Bridge is a running bridge.
type Bridge struct {
	cfg    Config
	log    *slog.Logger
	set    *metrics.Set
	m      bridgeMetrics
	hm     *ingest.Metrics
	engine *sharded.Engine
	tel    *ingest.Reader // match, decode, validate, report rejects
	queue  *queue.Queue
	sink   *sink
	inbox  *inbox
	http   *ops.Server

	// cm is the persistent session's connection manager, set once the
	// state is restored; the worker and sender start after that.
	cmMu sync.Mutex
	cm   *autopaho.ConnectionManager

	connected     atomic.Bool
	restored      atomic.Int64  // states restored at start
	restoredCh    chan struct{} // closed once restored and connected: the worker starts
	isReady       atomic.Bool
	ready         chan struct{} // closed once restored and subscribed
	readyOnce     sync.Once
	breakerOpen   atomic.Bool
	breakerLogged atomic.Int64 // Unix second of the last breaker log line
	sending       atomic.Bool  // the sender runs
	subscribed    atomic.Int64 // successful telemetry subscriptions (one per connection)

	// Connections: gen counts them; connChanged is closed and replaced on
	// each new one, waking the session goroutine to subscribe again.
	connMu      sync.Mutex
	gen         uint64
	connChanged chan struct{}
	attempts    map[*attempt]struct{} // publishes awaiting a PUBACK

	fences *fencefile.FenceFile

	cancel      context.CancelFunc // of the session goroutine and the sender
	workerStop  context.CancelFunc
	stopWriter  chan struct{}
	writerDone  chan struct{}
	workerDone  chan struct{}
	sessionDone chan struct{}
	dead        chan struct{} // closed by kill: a simulated crash
	killed      atomic.Bool
	closed      atomic.Bool
}

// Start loads the fences, opens the outbound queue, starts the engine and
// the HTTP endpoints, and connects upstream in the background, retrying
// until the broker answers: first to restore the fence state from the
// retained transitions, then with the persistent session that takes the
// telemetry. Ready is closed when telemetry flows, and /readyz turns 200.
func Start(cfg Config) (*Bridge, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	u, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	ff, fences, err := fencefile.Open(cfg.Fences, cfg.Log)
	if err != nil {
		return nil, err
	}
	b := &Bridge{
		cfg: cfg, log: cfg.Log, set: metrics.NewSet(),
		inbox: newInbox(), ready: make(chan struct{}), restoredCh: make(chan struct{}),
		connChanged: make(chan struct{}), attempts: map[*attempt]struct{}{},
		stopWriter: make(chan struct{}), writerDone: make(chan struct{}), workerDone: make(chan struct{}),
		sessionDone: make(chan struct{}), dead: make(chan struct{}),
		fences: ff,
	}
	if _, err := b.clientConfig(u); err != nil { // TLS files: fail now, not in the background
		return nil, err
	}
	if b.queue, err = queue.Open(cfg.QueueDir, cfg.QueueSync, cfg.Log.With("component", "queue")); err != nil {
		return nil, err
	}
	if d, _ := b.queue.Lens(); d > 0 {
		b.log.Info("outbound queue holds transitions from a previous run; they go out first", "queued", d, "dir", cfg.QueueDir)
	}
	b.sink = &sink{b: b, in: make(chan *queue.Entry, 4096)}
	if b.engine, err = sharded.New(cfg.Engine, fences, b.sink, stats.NewMetrics(b.set)); err != nil {
		return nil, err
	}
	b.fences.Attach(b.engine, b.set)
	b.hm = ingest.NewMetrics(b.set)
	b.tel = ingest.NewReader(cfg.Telemetry, b.engine, b.sink, b.hm, cfg.Log, cfg.MaxPayload)
	b.registerMetrics(b.set)
	go b.writeLoop(b.sink.in, b.stopWriter)
	if cfg.HTTPAddr != "" {
		if b.http, err = ops.Start(cfg.HTTPAddr, b.set, ops.ReadyWhen(b.isReady.Load), cfg.Pprof, cfg.Log); err != nil {
			b.engine.Close()
			close(b.stopWriter)
			<-b.writerDone
			return nil, err
		}
	}
	if cfg.FencesPoll > 0 {
		b.fences.Poll(cfg.FencesPoll)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	workCtx, workerStop := context.WithCancel(context.Background())
	b.workerStop = workerStop
	go b.work(workCtx)
	go b.session(runCtx, u)
	b.log.Info("edgefence bridge starting", "upstream", redacted(u), "client_id", cfg.ClientID,
		"http", b.HTTPAddr(), "fences", fences.Len(), "queue_dir", cfg.QueueDir)
	return b, nil
}

func redacted(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// conn returns the persistent session's connection manager, or nil before
// the state is restored.
func (b *Bridge) conn() *autopaho.ConnectionManager {
	b.cmMu.Lock()
	defer b.cmMu.Unlock()
	return b.cm
}

// Ready is closed once the fence state is restored and the telemetry
// subscribed.
func (b *Bridge) Ready() <-chan struct{} { return b.ready }

// HTTPAddr returns the HTTP listener's address, or "".
func (b *Bridge) HTTPAddr() string {
	if b.http == nil {
		return ""
	}
	return b.http.Addr()
}

// Queued returns the number of transitions in the outbound queue.
func (b *Bridge) Queued() int {
	d, _ := b.queue.Lens()
	return d
}

// Close shuts down in the order that loses nothing: telemetry stops being
// taken (what is unacknowledged stays with the broker), the engine closes
// and flushes every reorder buffer into the queue, the queue drains
// upstream for up to CloseTimeout (what is left is published on the next
// start), and only then the connection closes. The session stays, so the
// broker keeps queueing telemetry for the next run.
func (b *Bridge) Close(ctx context.Context) error {
	if !b.closed.CompareAndSwap(false, true) {
		return nil
	}
	b.isReady.Store(false)
	b.fences.Close()
	b.workerStop()
	<-b.workerDone
	b.engine.Close()
	close(b.stopWriter)
	<-b.writerDone
	if b.sending.Load() && b.cfg.CloseTimeout > 0 {
		dctx, cancel := context.WithTimeout(ctx, b.cfg.CloseTimeout)
		if !b.queue.WaitEmpty(dctx) {
			d, v := b.queue.Lens()
			b.log.Warn("shutdown: outbound queue not drained in time; its transitions are published on the next start",
				"queued", d, "side_reports_dropped", v, "timeout", b.cfg.CloseTimeout)
		}
		cancel()
	}
	b.cancel()
	<-b.sessionDone
	var err error
	if cm := b.conn(); cm != nil {
		// paho sends manual acknowledgements in batches, every
		// SendAcksInterval: give the last batch (the pings the worker took
		// before it stopped) time to leave, or the broker sends those pings
		// to the next run again. Best effort: a duplicate is late anyway.
		time.Sleep(ackFlushWait)
		dctx, cancel := context.WithTimeout(ctx, b.cfg.ConnectTimeout)
		defer cancel()
		if derr := cm.Disconnect(dctx); derr != nil {
			err = fmt.Errorf("disconnect: %w", derr)
		}
	}
	if b.http != nil {
		err = errors.Join(err, b.http.Shutdown(ctx))
	}
	return err
}

// kill stops the bridge as a crash would (tests only): nothing more is
// written to the queue, the engine's buffers are dropped, nothing is
// drained, and the connection drops without a DISCONNECT.
func (b *Bridge) kill() {
	if !b.closed.CompareAndSwap(false, true) {
		return
	}
	b.killed.Store(true)
	close(b.dead)
	b.isReady.Store(false)
	b.fences.Close()
	b.workerStop()
	b.cancel()
	<-b.workerDone
	<-b.sessionDone
	<-b.writerDone
	if cm := b.conn(); cm != nil {
		// autopaho sends no DISCONNECT (see clientConfig) and leaves the
		// socket open; close it as the kernel would close a dead
		// process's.
		<-cm.Done()
		cm.TerminateConnectionForTest()
	}
	b.engine.Close() // its flush goes nowhere: the sink sees dead
	if b.http != nil {
		_ = b.http.Shutdown(context.Background())
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
