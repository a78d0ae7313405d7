package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/evaluator/clock"
	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/stats"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/ops"
	"github.com/edgefence/edgefence/worker/checkpoint"
	"github.com/edgefence/edgefence/worker/security"
	"github.com/edgefence/edgefence/worker/subjects"
)

// Worker is a running worker.
type Worker struct {
	cfg     Config
	log     *slog.Logger
	set     *metrics.Set
	m       *workerMetrics
	em      *stats.Metrics
	im      *ingest.Metrics
	clamper clock.Clamper
	fences  *fence.Set // the --fences file's, read at start
	start   time.Time

	nc      *nats.Conn
	js      jetstream.JetStream
	leases  jetstream.KeyValue
	store   *checkpoint.Store
	history jetstream.Stream
	mq      mqtt.Client
	mqs     []mqtt.Client // mq and more: the partitions publish over these (mqttFor)
	http    *ops.Server

	mu    sync.Mutex
	parts map[int]*partition
	revs  map[int]uint64 // lease revisions of owned partitions

	ready  atomic.Bool
	cancel context.CancelFunc
	done   chan struct{}
	gcKick chan struct{} // fenceGCLoop's
	gcDone chan struct{}
}

// mono is the worker's monotonic clock, in ns since it started: lease
// validity is judged on it, so a wall clock step cannot extend a lease.
func (w *Worker) mono() int64 { return int64(time.Since(w.start)) }

// owned returns how many partitions the worker owns.
func (w *Worker) owned() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.parts)
}

// HTTPAddr returns the address the HTTP endpoints listen on ("" when
// off): the port chosen when Config.HTTPAddr asked for port 0.
func (w *Worker) HTTPAddr() string {
	if w.http == nil {
		return ""
	}
	return w.http.Addr()
}

// Owned returns the partitions the worker owns, ascending.
func (w *Worker) Owned() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]int, 0, len(w.parts))
	for n := range w.parts {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Start connects to the cluster and the MQTT listeners, creates the
// streams, the lease bucket and the checkpoint store if they are missing,
// starts the HTTP endpoints and begins taking partitions.
func Start(cfg Config) (*Worker, error) {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	geojson, err := os.ReadFile(cfg.Fences)
	if err != nil {
		return nil, fmt.Errorf("load fences: %w", err)
	}
	set0, err := fence.Parse(geojson)
	if err != nil {
		return nil, fmt.Errorf("load fences %s: %w", cfg.Fences, err)
	}
	w := &Worker{cfg: cfg, log: cfg.Log, set: metrics.NewSet(), fences: set0, start: time.Now(),
		parts: map[int]*partition{}, revs: map[int]uint64{}, done: make(chan struct{}),
		gcKick: make(chan struct{}, 1), gcDone: make(chan struct{})}
	w.m = newWorkerMetrics(w.set, w)
	w.em = stats.NewMetrics(w.set)
	w.im = ingest.NewMetrics(w.set)
	w.clamper = cfg.Engine.Clamper()
	if err := w.connect(); err != nil {
		w.closeConns()
		return nil, err
	}
	ctx0, cancel0 := context.WithTimeout(context.Background(), 30*time.Second)
	err = w.initFences(ctx0, geojson)
	cancel0()
	if err != nil {
		w.closeConns()
		return nil, err
	}
	if cfg.HTTPAddr != "" {
		if w.http, err = ops.Start(cfg.HTTPAddr, w.set, w.ready.Load, cfg.Pprof, w.log); err != nil {
			w.closeConns()
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go w.leaseLoop(ctx)
	go w.fenceGCLoop(ctx)
	return w, nil
}

func (w *Worker) connect() error {
	cfg := &w.cfg
	sec := &cfg.Security
	tc, err := sec.TLSConfig()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	mqUser, mqPass, err := sec.MQTTLogin(cfg.Name)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	w.nc, err = nats.Connect(cfg.NATS, append(sec.NATSOptions(tc), nats.Name("edgefence-worker "+cfg.Name), nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond), nats.RetryOnFailedConnect(false))...)
	if err != nil {
		return fmt.Errorf("connect to NATS %s: %w", security.RedactURLs(cfg.NATS), sec.Explain(err))
	}
	if w.js, err = jetstream.New(w.nc); err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	// Several workers starting at once create the same streams: retry
	// each step on its own deadline until the cluster agrees.
	if err := retry(w.log, "ping stream", func(ctx context.Context) error {
		_, err := w.ensureStream(ctx, jetstream.StreamConfig{
			Name: subjects.PingStream, Subjects: []string{subjects.PingSubjectPrefix + ">"}, Replicas: cfg.Replicas,
			Storage: jetstream.FileStorage, MaxAge: cfg.PingsMaxAge,
		})
		return err
	}); err != nil {
		return err
	}
	if err := retry(w.log, "history stream", func(ctx context.Context) (err error) {
		w.history, err = w.ensureStream(ctx, jetstream.StreamConfig{
			Name: subjects.HistoryStream, Subjects: []string{subjects.HistoryPrefix + ">"}, Replicas: cfg.Replicas,
			Storage: jetstream.FileStorage, Duplicates: cfg.DedupWindow, MaxAge: cfg.PingsMaxAge,
		})
		return err
	}); err != nil {
		return err
	}
	if err := retry(w.log, "lease bucket", func(ctx context.Context) (err error) {
		w.leases, err = w.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
			Bucket: subjects.LeaseBucket, TTL: cfg.Lease, Replicas: cfg.Replicas, Storage: jetstream.FileStorage, History: 1,
		})
		return err
	}); err != nil {
		return err
	}
	if err := retry(w.log, "checkpoint store", func(ctx context.Context) error {
		obs, err := w.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: subjects.CheckpointBucket, Replicas: cfg.Replicas, Storage: jetstream.FileStorage,
		})
		if err == nil {
			w.store = checkpoint.New(w.js, obs)
		}
		return err
	}); err != nil {
		return err
	}
	opts := mqtt.NewClientOptions().SetClientID("edgefence-worker-" + cfg.Name).SetCleanSession(true).
		SetAutoReconnect(true).SetMaxReconnectInterval(time.Second).
		SetConnectTimeout(5 * time.Second).SetOrderMatters(false)
	for _, a := range strings.Split(cfg.MQTT, ",") {
		if a = strings.TrimSpace(a); a != "" {
			opts.AddBroker(security.MQTTBroker(a, tc != nil))
		}
	}
	if tc != nil {
		opts.SetTLSConfig(tc)
	}
	if mqUser != "" || mqPass != "" {
		opts.SetUsername(mqUser).SetPassword(mqPass)
	}
	w.mq = mqtt.NewClient(opts)
	// Retried here rather than by paho (ConnectRetry), so that a refused
	// login or a TLS failure ends the start at once with its cause; a
	// listener not up yet is tried again for 30 s. Once connected, paho
	// reconnects by itself.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		tok := w.mq.Connect() // one ConnectTimeout per listener
		if tok.WaitTimeout(time.Minute) && tok.Error() == nil {
			return w.connectMQTTPool(opts)
		}
		err = tokErr(tok)
		if security.Permanent(err) || time.Now().After(deadline) {
			return fmt.Errorf("connect to MQTT %s: %w", security.RedactURLs(cfg.MQTT), sec.Explain(err))
		}
	}
}

// leaseLoop keeps the worker's presence and leases fresh and moves
// partitions toward their share: ceil(P/k) each of the k live workers.
func (w *Worker) leaseLoop(ctx context.Context) {
	defer close(w.done)
	period := w.cfg.Lease / 4
	t := time.NewTicker(period)
	defer t.Stop()
	first := true
	for {
		// The first round only announces the worker: workers started
		// together then see each other before taking shares, instead of
		// the first taking everything and handing most of it over.
		w.rebalance(ctx, !first)
		first = false
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// rebalance is one round of the lease loop; it takes free partitions
// only when take is set.
func (w *Worker) rebalance(ctx context.Context, take bool) {
	cfg := &w.cfg
	c, cancel := context.WithTimeout(ctx, w.cfg.Lease/2)
	defer cancel()
	if _, err := w.leases.Put(c, subjects.PresenceKey(cfg.Name), []byte(cfg.Name)); err != nil {
		w.log.Warn("lease bucket unreachable", "error", err)
		w.renew(c) // expire what cannot be renewed
		return
	}
	live, err := w.liveWorkers(c)
	if err != nil {
		w.log.Warn("lease bucket unreachable", "error", err)
		w.renew(c)
		return
	}
	w.renew(c)
	if !slices.Contains(live, cfg.Name) {
		return
	}
	// Sticky shares: a worker keeps what it owns up to its quota, gives
	// back the excess, and takes free partitions below it, so a join or a
	// death moves only the partitions it must.
	quota := (cfg.Partitions + len(live) - 1) / len(live)
	owned := w.Owned()
	for i := len(owned) - 1; i >= quota; i-- {
		n := owned[i]
		w.mu.Lock()
		pt := w.parts[n]
		w.mu.Unlock()
		w.releasePartition(c, n, pt)
	}
	have := min(len(owned), quota)
	first := slices.Index(live, cfg.Name) * cfg.Partitions / len(live)
	for i := 0; take && i < cfg.Partitions && have < quota; i++ {
		n := (first + i) % cfg.Partitions
		w.mu.Lock()
		mine := w.parts[n] != nil
		w.mu.Unlock()
		if !mine && w.acquire(c, n) {
			have++
		}
	}
	w.ready.Store(take)
}

// liveWorkers lists the names of the workers whose presence is fresh.
func (w *Worker) liveWorkers(ctx context.Context) ([]string, error) {
	kl, err := w.leases.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	var live []string
	for k := range kl.Keys() {
		if name, ok := subjects.PresenceName(k); ok {
			live = append(live, name)
		}
	}
	slices.Sort(live)
	return live, nil
}

// renew renews the lease of every owned partition; one that cannot be
// renewed is stopped.
func (w *Worker) renew(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for n, pt := range w.parts {
		asked := w.mono()
		rev, err := w.leases.Update(ctx, subjects.LeaseKey(n), []byte(w.cfg.Name), w.revs[n])
		if err != nil {
			if pt.w.mono() > pt.validUntil.Load() || errors.Is(err, jetstream.ErrKeyExists) {
				w.log.Warn("partition lease lost", "partition", n, "error", err)
				w.m.lost.Inc()
				if errors.Is(err, jetstream.ErrKeyExists) {
					pt.validUntil.Store(0) // another owner has it: stop at once
				}
				pt.cancel()
				delete(w.parts, n)
				delete(w.revs, n)
				w.m.ckptAt[n].Store(0)
				w.m.part[n].Store(nil)
			}
			continue
		}
		w.revs[n] = rev
		pt.validUntil.Store(asked + int64(w.cfg.Lease) - int64(time.Second))
	}
}

// acquire takes partition n if its lease is free, and reports whether it did.
func (w *Worker) acquire(ctx context.Context, n int) bool {
	asked := w.mono()
	rev, err := w.leases.Create(ctx, subjects.LeaseKey(n), []byte(w.cfg.Name))
	if err != nil {
		return false // owned by another until it releases it or its lease expires
	}
	pctx, cancel := context.WithCancel(context.Background())
	pt := &partition{w: w, n: n, cancel: cancel, stopCh: make(chan struct{}), done: make(chan struct{})}
	pt.sink.cfg = &w.cfg
	pt.rejects.s = &pt.sink
	pt.reader = ingest.NewReader(w.cfg.Telemetry, nil, &pt.rejects, w.im, w.log, w.cfg.MaxPayload)
	pt.validUntil.Store(asked + int64(w.cfg.Lease) - int64(time.Second))
	w.mu.Lock()
	w.parts[n], w.revs[n] = pt, rev
	w.mu.Unlock()
	w.m.acquired.Inc()
	w.m.ckptAt[n].Store(time.Now().UnixNano())
	w.m.part[n].Store(pt)
	go func() {
		defer close(pt.done)
		if err := pt.run(pctx); err != nil && pctx.Err() == nil {
			w.log.Error("partition stopped", "partition", n, "error", err)
			// Give it up so that it is taken again from its checkpoint.
			w.dropPartition(n, pt)
		}
	}()
	return true
}

// dropPartition forgets pt and deletes its lease if still ours.
func (w *Worker) dropPartition(n int, pt *partition) {
	w.mu.Lock()
	rev, ok := w.revs[n]
	if w.parts[n] == pt {
		delete(w.parts, n)
		delete(w.revs, n)
	}
	w.mu.Unlock()
	w.m.ckptAt[n].Store(0)
	w.m.part[n].Store(nil)
	if ok {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = w.leases.Delete(ctx, subjects.LeaseKey(n), jetstream.LastRevision(rev))
	}
}

// releasePartition hands partition n over: stop it with a final
// checkpoint, then delete its lease so that its new owner takes it.
func (w *Worker) releasePartition(ctx context.Context, n int, pt *partition) {
	close(pt.stopCh)
	w.released(ctx, n, pt)
}

// released waits for partition n, told to stop, to end (its final
// checkpoint taken), then deletes its lease so that its new owner takes it.
func (w *Worker) released(ctx context.Context, n int, pt *partition) {
	<-pt.done
	pt.cancel()
	w.mu.Lock()
	rev := w.revs[n]
	delete(w.parts, n)
	delete(w.revs, n)
	w.mu.Unlock()
	w.m.ckptAt[n].Store(0)
	w.m.part[n].Store(nil)
	_ = w.leases.Delete(ctx, subjects.LeaseKey(n), jetstream.LastRevision(rev))
	w.m.released.Inc()
	w.log.Info("partition released", "partition", n)
}

// Close releases every partition with a final checkpoint, removes the
// worker's presence and closes its connections.
func (w *Worker) Close(ctx context.Context) error {
	w.ready.Store(false)
	w.cancel()
	<-w.done
	<-w.gcDone
	// Renew once more, then stop every partition at once: their final
	// checkpoints are taken while the leases certainly hold.
	w.renew(ctx)
	w.mu.Lock()
	parts := make(map[int]*partition, len(w.parts))
	for n, pt := range w.parts {
		parts[n] = pt
		close(pt.stopCh)
	}
	w.mu.Unlock()
	for n, pt := range parts {
		w.released(ctx, n, pt)
	}
	_ = w.leases.Delete(ctx, subjects.PresenceKey(w.cfg.Name))
	w.closeConns()
	return nil
}

func (w *Worker) closeConns() {
	if w.http != nil {
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = w.http.Shutdown(c)
		cancel()
	}
	for _, c := range w.mqs[min(1, len(w.mqs)):] {
		c.Disconnect(250)
	}
	if w.mq != nil {
		w.mq.Disconnect(250)
	}
	if w.nc != nil {
		w.nc.Close()
	}
}

// ensureStream returns the stream, creating it if it does not exist. An
// existing stream is left as it is (an operator may have tuned it), and
// workers starting together do not all propose the same update.
func (w *Worker) ensureStream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	s, err := w.js.Stream(ctx, cfg.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		s, err = w.js.CreateStream(ctx, cfg)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return w.js.Stream(ctx, cfg.Name)
		}
	}
	return s, err
}

// retry runs step with a 5 s deadline until it succeeds, for a minute.
func retry(log *slog.Logger, what string, step func(context.Context) error) error {
	var err error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = step(ctx)
		cancel()
		if err == nil {
			return nil
		}
		log.Warn("cluster set-up step failed, retrying", "step", what, "error", err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
