// Package retainfollow keeps a serve --cluster node's retained set equal
// to the cluster's and delivers the cluster's outputs to the node's
// dashboards. At start it reads the retained bucket the workers write
// (each retained output's current value, subjects.RetainedBucket); from
// then on it delivers every output, retained or not, from the history
// stream, the one place that holds each device's outputs in the order
// its partition decided them. A Sink the broker implements with mochi's
// injection takes them. So a dashboard on any node gets the whole
// retained state from the node's memory, and live outputs in each
// device's order. It imports no broker. docs/scale-out.md, "Dashboards
// on any serve node".
package retainfollow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/security"
	"github.com/edgefence/edgefence/worker/subjects"
)

// Sink receives what the follower delivers, one call at a time.
type Sink interface {
	// Retain makes body topic's retained message (an empty body: none)
	// and delivers it to the topic's subscribers.
	Retain(topic string, body []byte)
	// Publish delivers a message that is not retained to the topic's
	// subscribers.
	Publish(topic string, body []byte)
}

// Options are what Start connects and follows with.
type Options struct {
	// NATS is the cluster's client URLs, comma-separated.
	NATS string
	// Security is the NATS credentials and TLS settings.
	Security security.Settings
	// Name names the connection to the servers.
	Name string
	// Replicas makes the retained bucket when no worker has.
	Replicas int
	// StallAfter is how long the follower may stay behind the bucket
	// (or the history stream) without receiving anything before it
	// replaces its watcher; 0: DefaultStallAfter.
	StallAfter time.Duration
	// SyncTimeout bounds Start's wait for the bucket's current values;
	// 0: DefaultSyncTimeout.
	SyncTimeout time.Duration
	// SettleWindow is how long after start the follower watches for
	// bucket writes whose history records came before its start (see
	// DefaultSettleWindow), checked every quarter of StallAfter; 0:
	// DefaultSettleWindow. Tests shorten it.
	SettleWindow time.Duration
	// Metrics is where the follower registers its counters; nil: a set
	// of its own.
	Metrics *metrics.Set
	// Log receives the follower's warnings; nil: slog.Default().
	Log *slog.Logger
}

// Defaults of Options.
const (
	DefaultStallAfter  = time.Second
	DefaultSyncTimeout = time.Minute
	// DefaultSettleWindow is how long after start the follower watches
	// for bucket writes whose history records came before the point it
	// follows the history from: a worker writes a retained value after
	// its record, and retries the write for up to its lease. Such a value
	// the history does not deliver is retained when the window ends.
	DefaultSettleWindow = 30 * time.Second
)

// Follower follows the retained bucket and the history stream into a
// Sink until Close.
type Follower struct {
	o    Options
	sink Sink
	nc   *nats.Conn
	js   jetstream.JetStream
	kv   jetstream.KeyValue

	histMu sync.Mutex
	hist   jetstream.Stream // nil until a worker has made it

	bucket, history source

	cancel context.CancelFunc
	wg     sync.WaitGroup
	synced chan struct{} // closed once the bucket's current values are delivered

	sinkMu sync.Mutex // one Sink call at a time

	settleMu sync.Mutex
	syncedAt time.Time         // zero until synced
	settling bool              // within SettleWindow of syncedAt
	pending  map[string][]byte // bucket writes after the start's values, by topic
	seen     map[string]bool   // topics the history delivered since the start; nil once settled

	// The watchdog's own: the history stream's last sequence when the
	// settle window ended, which the history must reach before the
	// follower settles.
	settleAt    uint64
	settleKnown bool
}

// Start connects, makes the retained bucket if it is missing, and
// returns once the bucket's current values are delivered to sink (or
// fails after SyncTimeout); the updates after them follow as they come.
func Start(o Options, sink Sink) (*Follower, error) {
	if o.StallAfter <= 0 {
		o.StallAfter = DefaultStallAfter
	}
	if o.SyncTimeout <= 0 {
		o.SyncTimeout = DefaultSyncTimeout
	}
	if o.SettleWindow <= 0 {
		o.SettleWindow = DefaultSettleWindow
	}
	if o.Metrics == nil {
		o.Metrics = metrics.NewSet()
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if err := o.Security.Validate(); err != nil {
		return nil, err
	}
	tc, err := o.Security.TLSConfig()
	if err != nil {
		return nil, err
	}
	f := &Follower{o: o, sink: sink, synced: make(chan struct{}), pending: map[string][]byte{}, seen: map[string]bool{}}
	f.bucket.init("bucket", o.Metrics)
	f.history.init("history", o.Metrics)
	opts := append(o.Security.NATSOptions(tc), cluster.LogEvents(o.Log.With("nats", "retained follower"))...)
	f.nc, err = nats.Connect(o.NATS, append(opts, nats.Name("edgefence-serve-follow "+o.Name),
		nats.MaxReconnects(-1), nats.ReconnectWait(250*time.Millisecond))...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS %s: %w", security.RedactURLs(o.NATS), o.Security.Explain(err))
	}
	if f.js, err = jetstream.New(f.nc); err != nil {
		f.nc.Close()
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	deadline := time.Now().Add(o.SyncTimeout)
	if err := f.open(deadline); err != nil {
		f.nc.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.wg.Add(3)
	go f.followBucket(ctx)
	go f.followHistory(ctx)
	go f.watchdog(ctx)
	select {
	case <-f.synced:
		return f, nil
	case <-time.After(time.Until(deadline)):
		f.Close()
		return nil, fmt.Errorf("retained bucket %s: its current values did not come within %v", subjects.RetainedBucket, o.SyncTimeout)
	}
}

// open finds (or makes) the retained bucket and the history stream,
// trying until deadline while the cluster elects its leaders. The
// history is followed from its end: what came before is the past.
func (f *Follower) open(deadline time.Time) error {
	for ; ; time.Sleep(250 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := f.openOnce(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		f.o.Log.Warn("retained bucket or history stream not ready, retrying", "error", err)
	}
}

func (f *Follower) openOnce(ctx context.Context) error {
	var err error
	if f.kv, err = cluster.RetainedBucket(ctx, f.js, f.o.Replicas); err != nil {
		return fmt.Errorf("retained bucket: %w", err)
	}
	hist, err := f.js.Stream(ctx, subjects.HistoryStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil // no worker has made it yet: followed once one has
	}
	if err != nil {
		return fmt.Errorf("history stream: %w", err)
	}
	info, err := hist.Info(ctx)
	if err != nil {
		return fmt.Errorf("history stream: %w", err)
	}
	f.history.seq.Store(info.State.LastSeq)
	f.setHist(hist)
	return nil
}

// histStream returns the history stream, nil until it is found.
func (f *Follower) histStream() jetstream.Stream {
	f.histMu.Lock()
	defer f.histMu.Unlock()
	return f.hist
}

func (f *Follower) setHist(s jetstream.Stream) {
	f.histMu.Lock()
	defer f.histMu.Unlock()
	f.hist = s
}

// Close stops following and closes the connection.
func (f *Follower) Close() {
	if f.cancel != nil {
		f.cancel()
	}
	f.wg.Wait()
	f.nc.Close()
}

// retain and publish call the sink, one call at a time.
func (f *Follower) retain(topic string, body []byte) {
	f.sinkMu.Lock()
	defer f.sinkMu.Unlock()
	f.sink.Retain(topic, body)
}

func (f *Follower) publish(topic string, body []byte) {
	f.sinkMu.Lock()
	defer f.sinkMu.Unlock()
	f.sink.Publish(topic, body)
}

// markSynced records that the bucket's current values are delivered:
// the settle window starts.
func (f *Follower) markSynced() {
	f.settleMu.Lock()
	f.syncedAt, f.settling = time.Now(), true
	f.settleMu.Unlock()
	close(f.synced)
}

// bucketWrite notes a bucket write after the start's values while the
// settle window lasts.
func (f *Follower) bucketWrite(topic string, body []byte) {
	f.settleMu.Lock()
	defer f.settleMu.Unlock()
	if f.settling {
		f.pending[topic] = body
	}
}

// historyDelivered notes a topic the history delivered until the
// follower has settled.
func (f *Follower) historyDelivered(topic string) {
	f.settleMu.Lock()
	defer f.settleMu.Unlock()
	if f.seen != nil {
		f.seen[topic] = true
	}
}

// settle ends the settle window once it has passed, and settles once
// the history has delivered every record made before it ended: each
// topic written to the bucket within the window that the history did
// not deliver is then retained with the bucket's value. A value written
// near the window's end has its record in the history, which may be
// behind (a busy sink, a consumer replaced); settling before it caught
// up delivered such a value twice, the newer one before the older.
func (f *Follower) settle(ctx context.Context) {
	f.settleMu.Lock()
	if f.seen == nil || f.syncedAt.IsZero() || time.Since(f.syncedAt) < f.o.SettleWindow {
		f.settleMu.Unlock()
		return
	}
	// Each write noted so far came after its record, so the history's
	// last sequence, read after this, is at or past all their records.
	f.settling = false
	f.settleMu.Unlock()
	if !f.settleKnown {
		last, err := f.historyLast(ctx)
		if err != nil {
			return // tried again at the watchdog's next check
		}
		f.settleAt, f.settleKnown = last, true
	}
	if f.history.seq.Load() < f.settleAt {
		return
	}
	f.settleMu.Lock()
	var late []string
	for topic := range f.pending {
		if !f.seen[topic] {
			late = append(late, topic)
		}
	}
	pending := f.pending
	f.pending, f.seen = nil, nil
	f.settleMu.Unlock()
	for _, topic := range late {
		f.o.Log.Info("cluster follower retains a value written after its history record", "topic", topic)
		f.retain(topic, pending[topic])
	}
}

// historyLast returns the history stream's last sequence, 0 while no
// worker has made it.
func (f *Follower) historyLast(ctx context.Context) (uint64, error) {
	hist := f.histStream()
	if hist == nil {
		h, err := f.js.Stream(ctx, subjects.HistoryStream)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("history stream: %w", err)
		}
		hist = h
	}
	info, err := hist.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("history stream: %w", err)
	}
	return info.State.LastSeq, nil
}

// source is one followed stream's progress, which the watchdog reads.
type source struct {
	name    string
	seq     atomic.Uint64 // the last stream sequence delivered (or skipped)
	lag     atomic.Int64  // messages in the stream beyond seq, at the last check
	replace chan string   // asks the follower for a new watcher, with the reason
	logged  atomic.Int64  // second of the last replacement logged

	updates, restarts *metrics.Counter
}

func (s *source) init(name string, set *metrics.Set) {
	s.name = name
	s.replace = make(chan string, 1)
	l := `{source="` + name + `"}`
	s.updates = set.NewCounter(`edgefence_cluster_follow_updates_total` + l)
	s.restarts = set.NewCounter(`edgefence_cluster_follow_restarts_total` + l)
	set.NewGauge(`edgefence_cluster_follow_lag`+l, func() float64 { return float64(s.lag.Load()) })
}

// ask asks the follower to replace its watcher, unless it was asked already.
func (s *source) ask(reason string) {
	select {
	case s.replace <- reason:
	default:
	}
}

// replaced counts and logs a watcher being replaced, one line a second
// at most: while the cluster elects, tries fail 4 times a second.
func (f *Follower) replaced(s *source, reason string, err error) {
	s.restarts.Inc()
	now := time.Now().Unix()
	if last := s.logged.Load(); last == now || !s.logged.CompareAndSwap(last, now) {
		return
	}
	f.o.Log.Warn("cluster follower replaces its watcher (further ones this second only counted in edgefence_cluster_follow_restarts_total)",
		"source", s.name, "reason", reason, "from_seq", s.seq.Load()+1, "error", err)
}

// pause waits d or until ctx is done.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
