package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/evaluator/fence"
	"github.com/edgefence/edgefence/evaluator/stats"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/ops"
	"github.com/edgefence/edgefence/worker/checkpoint"
	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/partition"
	"github.com/edgefence/edgefence/worker/subjects"
)

// Worker is a running worker.
type Worker struct {
	cfg    Config
	log    *slog.Logger
	set    *metrics.Set
	m      *workerMetrics
	fences *fence.Set // the --fences file's, read at start
	start  time.Time

	conn  *cluster.Conn
	store *checkpoint.Store
	http  *ops.Server
	// owner is what the partitions use of the worker, set once connected.
	owner *partition.Owner

	mu    sync.Mutex
	parts map[int]*partition.Partition
	revs  map[int]uint64 // lease revisions of owned partitions
	// holdUntil is, per partition given up stalled, the mono ns until
	// which this worker leaves it to others.
	holdUntil map[int]int64
	// lapsed holds the partitions stopped because their lease could not
	// be renewed, in time or on its revision: the lease loop takes them
	// back first when the bucket answers (reclaim), once they have ended.
	lapsed map[int]*partition.Partition
	// downSince is the mono ns the lease bucket stopped answering, 0
	// while it answers; putAt is when the last presence write that was
	// stored was asked for. The lease loop's own, as are seen (the live
	// workers of the last round that reached the bucket) and grace, the
	// peers still counted live until graceUntil after an outage.
	downSince, putAt, graceUntil int64
	seen, grace                  []string
	unlisted                     bool // the last round could not list the live workers

	ready  atomic.Bool
	cancel context.CancelFunc
	done   chan struct{}
	gcKick chan struct{} // fenceGCLoop's
	gcDone chan struct{}
	// watchDone is closed when the watchdog's loop has ended.
	watchDone chan struct{}
}

// mono is the worker's monotonic clock, in ns since it started: lease
// validity is judged on it, so a wall clock step cannot extend a lease.
func (w *Worker) mono() int64 { return int64(time.Since(w.start)) }

// validUntil is the mono instant until which a lease written at mono
// instant asked holds for its partition: a second short of the bucket's
// expiry, so that the partition stops before anyone else can take it.
func (w *Worker) validUntil(asked int64) int64 {
	return asked + int64(w.cfg.Lease) - int64(time.Second)
}

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
	w := &Worker{cfg: cfg, log: cfg.Log, set: cfg.Metrics, fences: set0, start: time.Now(),
		parts: map[int]*partition.Partition{}, revs: map[int]uint64{}, holdUntil: map[int]int64{}, lapsed: map[int]*partition.Partition{}, done: make(chan struct{}),
		gcKick: make(chan struct{}, 1), gcDone: make(chan struct{}), watchDone: make(chan struct{})}
	ingestSet := metrics.NewSet() // counted by the broker when it shares its set
	if w.set == nil {
		w.set = metrics.NewSet()
		ingestSet = w.set
	}
	w.m = newWorkerMetrics(w.set, w)
	em := cfg.EngineMetrics
	if em == nil {
		em = stats.NewMetrics(w.set)
	}
	if err := w.connect(); err != nil {
		w.closeConns()
		return nil, err
	}
	w.owner = &partition.Owner{Conn: w.conn, Store: w.store, Log: w.log, Metrics: w.m.Metrics,
		EngineMetrics: em, IngestMetrics: ingest.NewMetrics(ingestSet), Clamper: cfg.Engine.Clamper(),
		Mono: w.mono, FencesSaved: w.kickFenceGC,
		Config: partition.Config{Engine: cfg.Engine, Lease: cfg.Lease, CheckpointEvery: cfg.CheckpointEvery,
			DedupWindow: cfg.DedupWindow, Telemetry: cfg.Telemetry, TransitionPrefix: cfg.TransitionPrefix,
			LateTopic: cfg.LateTopic, RejectTopic: cfg.RejectTopic, MaxPayload: cfg.MaxPayload}}
	ctx0, cancel0 := context.WithTimeout(context.Background(), 30*time.Second)
	err = w.initFences(ctx0, geojson)
	cancel0()
	if err != nil {
		w.closeConns()
		return nil, err
	}
	if cfg.HTTPAddr != "" {
		if w.http, err = ops.Start(cfg.HTTPAddr, w.set, ops.ReadyWhen(w.ready.Load), cfg.Pprof, w.log); err != nil {
			w.closeConns()
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go w.leaseLoop(ctx)
	go w.watchLoop(ctx)
	go w.fenceGCLoop(ctx)
	return w, nil
}

// connect dials the cluster (package cluster).
func (w *Worker) connect() error {
	cfg := &w.cfg
	c, err := cluster.Dial(cluster.Options{NATS: cfg.NATS, MQTT: cfg.MQTT, Security: cfg.Security, Name: cfg.Name,
		Partitions: cfg.Partitions, Replicas: cfg.Replicas, Lease: cfg.Lease, DedupWindow: cfg.DedupWindow,
		PingsMaxAge: cfg.PingsMaxAge, Log: w.log, CheckpointStream: checkpoint.StreamConfig(cfg.Replicas)})
	if se := (*cluster.SettingsError)(nil); errors.As(err, &se) {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if err != nil {
		return err
	}
	w.conn = c
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if w.store, err = checkpoint.New(ctx, c.JS, c.Checkpoints); err != nil {
		return err
	}
	return nil
}

// leaseLoop keeps the worker's presence and leases fresh and moves
// partitions toward their share: ceil(P/k) each of the k live workers.
func (w *Worker) leaseLoop(ctx context.Context) {
	defer close(w.done)
	period := w.cfg.Lease / 4
	retry := min(period, 250*time.Millisecond)
	t := time.NewTimer(0)
	defer t.Stop()
	announce := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A round after the lease bucket was unreachable (and the first)
		// only announces the worker: an outage longer than a lease lets
		// every presence expire, and the first worker back would take
		// every partition, then hand most of them over. The workers retry
		// every retry while the bucket is unreachable, so a round two
		// retries after the announcement sees those not held by a request
		// in flight; the grace after an outage (rebalance) covers those.
		wait := period
		switch reached := w.rebalance(ctx, !announce); {
		case !reached:
			announce, wait = true, retry
		case announce:
			announce, wait = false, 2*retry
		}
		t.Reset(wait)
	}
}

// rebalance is one round of the lease loop; it takes free partitions
// only when take is set. It reports whether the lease bucket answered.
func (w *Worker) rebalance(ctx context.Context, take bool) bool {
	cfg := &w.cfg
	asked := w.mono()
	announce := func(c context.Context) (uint64, error) {
		return w.conn.Leases.Put(c, subjects.PresenceKey(cfg.Name), []byte(cfg.Name))
	}
	c, cancel := context.WithTimeout(ctx, w.cfg.Lease/2)
	defer cancel()
	var err error
	if w.downSince != 0 {
		// Out of reach: a put sent during the bucket's election is never
		// answered, and the next one reaches the new leader. The rest of
		// the round gets its own time.
		_, err = cluster.Hedged(c, cluster.HedgeEvery, announce, nil)
		if err == nil {
			cancel()
			c, cancel = context.WithTimeout(ctx, w.cfg.Lease/2)
			defer cancel()
		}
	} else {
		_, err = announce(c)
	}
	if err != nil {
		w.unreachable(err)
		w.renew(c) // expire what cannot be renewed
		return false
	}
	if w.downSince != 0 {
		w.log.Info("lease bucket reachable again", "after", time.Duration(w.mono()-w.downSince).Round(time.Millisecond),
			"unrenewed", time.Duration(asked-w.putAt).Round(time.Millisecond))
		w.downSince = 0
		// A peer can get the bucket back up to a request's timeout later
		// (one asked just before it returned): the peers of the last round
		// count as live for a lease, so their lapsed partitions wait for
		// them to take them back rather than move twice.
		w.grace, w.graceUntil = w.seen, w.mono()+int64(cfg.Lease)
	}
	w.putAt = asked
	// Renewals and lapsed leases need the bucket alone; listing the live
	// workers makes a consumer, which waits for the cluster's meta leader
	// too (elected apart, often seconds later after a NATS node's death).
	w.renew(c)
	w.reclaim(c)
	live, err := w.liveWorkers(c)
	if err != nil {
		if !w.unlisted {
			w.log.Warn("live workers not listed", "error", err)
		}
		w.unlisted = true
		return false
	}
	w.seen, w.unlisted = live, false
	if !slices.Contains(live, cfg.Name) {
		return true
	}
	if w.mono() < w.graceUntil {
		live = slices.Compact(slices.Sorted(slices.Values(append(slices.Clip(live), w.grace...))))
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
		if pt != nil { // not stopped on its own since Owned
			w.releasePartition(c, n, pt)
		}
	}
	have := min(len(owned), quota)
	first := slices.Index(live, cfg.Name) * cfg.Partitions / len(live)
	for i := 0; take && i < cfg.Partitions && have < quota; i++ {
		n := (first + i) % cfg.Partitions
		w.mu.Lock()
		mine := w.parts[n] != nil
		// One given up stalled is left to the others for a lease.
		held := w.mono() < w.holdUntil[n] && len(live) > 1
		w.mu.Unlock()
		if !mine && !held && w.acquire(c, n) {
			have++
		}
	}
	if take {
		w.ready.Store(true)
	}
	return true
}

// unreachable logs the lease bucket's failure once per outage (the
// lease loop retries it four times a second).
func (w *Worker) unreachable(err error) {
	if w.downSince == 0 {
		w.downSince = w.mono()
		w.log.Warn("lease bucket unreachable", "error", err)
	}
}

// liveWorkers lists the names of the workers whose presence is fresh.
func (w *Worker) liveWorkers(ctx context.Context) ([]string, error) {
	kl, err := w.conn.Leases.ListKeys(ctx)
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
		rev, err := w.conn.Leases.Update(ctx, subjects.LeaseKey(n), []byte(w.cfg.Name), w.revs[n])
		if err != nil {
			if w.mono() > pt.ValidUntil.Load() || conflict(err) {
				w.log.Warn("partition lease lost", "partition", n, "error", err)
				w.m.lost.Inc()
				if conflict(err) {
					// Another owner has it, the bucket lost it, or a
					// renewal that timed out landed (all seen after a NATS
					// node's death): stop at once, and take it again if it
					// still names this worker or is gone (reclaim).
					pt.ValidUntil.Store(0)
				}
				w.lapseLocked(n, pt)
			}
			continue
		}
		w.revs[n] = rev
		pt.ValidUntil.Store(w.validUntil(asked))
	}
}

// acquire takes partition n if its lease is free, and reports whether it did.
func (w *Worker) acquire(ctx context.Context, n int) bool {
	asked := w.mono()
	rev, err := w.conn.Leases.Create(ctx, subjects.LeaseKey(n), []byte(w.cfg.Name))
	if err != nil {
		return false // owned by another until it releases it or its lease expires
	}
	w.run(n, rev, asked)
	return true
}

// run runs partition n under its lease of revision rev, asked for at
// mono instant asked.
func (w *Worker) run(n int, rev uint64, asked int64) {
	w.launch(n, partition.New(w.owner, n, w.validUntil(asked)), rev)
}

// launch runs pt, a run of partition n, under its lease of revision rev.
func (w *Worker) launch(n int, pt *partition.Partition, rev uint64) {
	w.mu.Lock()
	w.parts[n], w.revs[n] = pt, rev
	w.mu.Unlock()
	w.m.acquired.Inc()
	w.m.CheckpointAt[n].Store(time.Now().UnixNano())
	w.m.part[n].Store(pt)
	pt.Go(func(err error) {
		if errors.Is(err, partition.ErrLeaseLost) {
			// Not renewed in time: kept for the lease loop to take back.
			w.lapse(n, pt)
			return
		}
		w.log.Error("partition stopped", "partition", n, "error", err)
		// Give it up so that it is taken again from its checkpoint.
		w.dropPartition(n, pt)
	})
}

// dropPartition forgets pt and deletes its lease if still ours.
func (w *Worker) dropPartition(n int, pt *partition.Partition) {
	w.mu.Lock()
	rev, ok := w.revs[n]
	if w.parts[n] == pt {
		delete(w.parts, n)
		delete(w.revs, n)
	}
	w.mu.Unlock()
	w.m.CheckpointAt[n].Store(0)
	w.m.part[n].Store(nil)
	if ok {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = w.conn.Leases.Delete(ctx, subjects.LeaseKey(n), jetstream.LastRevision(rev))
	}
}

// releasePartition hands partition n over: stop it with a final
// checkpoint, then delete its lease so that its new owner takes it.
func (w *Worker) releasePartition(ctx context.Context, n int, pt *partition.Partition) {
	pt.Stop()
	w.released(ctx, n, pt)
}

// released waits for partition n, told to stop, to end (its final
// checkpoint taken), then deletes its lease so that its new owner takes it.
func (w *Worker) released(ctx context.Context, n int, pt *partition.Partition) {
	<-pt.Done()
	pt.Cancel()
	w.mu.Lock()
	rev, mine := w.revs[n], w.parts[n] == pt
	if mine {
		delete(w.parts, n)
		delete(w.revs, n)
	}
	w.mu.Unlock()
	if !mine {
		return // it stopped on its own meanwhile, and dropPartition gave it up
	}
	w.m.CheckpointAt[n].Store(0)
	w.m.part[n].Store(nil)
	_ = w.conn.Leases.Delete(ctx, subjects.LeaseKey(n), jetstream.LastRevision(rev))
	w.m.released.Inc()
	w.log.Info("partition released", "partition", n)
}

// Close releases every partition with a final checkpoint, removes the
// worker's presence and closes its connections.
func (w *Worker) Close(ctx context.Context) error {
	w.ready.Store(false)
	w.cancel()
	<-w.done
	<-w.watchDone
	<-w.gcDone
	// Renew once more, then stop every partition at once: their final
	// checkpoints are taken while the leases certainly hold.
	w.renew(ctx)
	w.mu.Lock()
	parts := make(map[int]*partition.Partition, len(w.parts))
	for n, pt := range w.parts {
		parts[n] = pt
		pt.Stop()
	}
	w.mu.Unlock()
	for n, pt := range parts {
		w.released(ctx, n, pt)
	}
	_ = w.conn.Leases.Delete(ctx, subjects.PresenceKey(w.cfg.Name))
	w.closeConns()
	return nil
}

func (w *Worker) closeConns() {
	if w.http != nil {
		c, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = w.http.Shutdown(c)
		cancel()
	}
	if w.conn != nil {
		w.conn.Close()
	}
}
