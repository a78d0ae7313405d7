package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgefence/edgefence/loadgen/fencegen"
	"github.com/edgefence/edgefence/loadgen/probe"
	"github.com/edgefence/edgefence/loadgen/rxstamp"
	"github.com/edgefence/edgefence/progress"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Config is one load run.
type Config struct {
	Addr           string  // broker's MQTT TCP address (loopback)
	Conns          int     // tracker connections
	DevicesPerConn int     // devices publishing over each connection
	QoS            byte    // 0 or 1
	Rate           float64 // total pings/s; 0: unthrottled (QoS 1: as fast as PUBACKs return)
	Window         int     // QoS 1 pings in flight per connection at most
	Batch          int     // unthrottled: pings per write at most
	Burst          int     // paced: pings per write, each connection's sent that many at a time (1: a write per ping)
	Workers        int     // sending goroutines, each owning a share of the connections

	Warmup   time.Duration // load before measuring
	Duration time.Duration // the measured window
	Drain    time.Duration // after the load stops, how long to wait for acks and transitions at most

	Sub     string // the subscriber's filter ("geofence/#", "devices/#"); "": none
	SubQoS  byte
	SubAddr string // the subscriber's broker address (loopback); "": Addr

	Fences     []fencegen.Fence // the fences devices walk across (fencegen.Generate)
	CrossEvery int              // pings on each side of the edge: 1/CrossEvery of pings cause a transition

	MetricsURL string // the broker's /metrics, or "" for a broker without one
	PID        int    // the broker's process id for CPU and RSS, or 0

	ConnectParallel int           // connections opened concurrently
	ConnectTimeout  time.Duration // for the whole connect phase
	AckTimeout      time.Duration // a QoS 1 ping not acknowledged in this long is counted unacked
	Tag             string        // prefix of device and client ids; "" picks a random one
	Seed            uint64

	Progress  io.Writer      // progress lines; nil: none
	Status    *progress.Line // redrawn from the connect to the end of the drain: pings sent, time left; nil: none
	OnMeasure func()         // called when the measured window begins (e.g. to start a profile); nil: none
}

// DefaultConfig is 1,000 QoS 1 connections, one device each, unthrottled,
// a 2 s warm-up and a 10 s window, a subscriber on geofence/#.
func DefaultConfig() Config {
	return Config{
		Addr:            "127.0.0.1:1883",
		Conns:           1000,
		DevicesPerConn:  1,
		QoS:             1,
		Window:          16,
		Batch:           16,
		Burst:           1,
		Workers:         4,
		Warmup:          2 * time.Second,
		Duration:        10 * time.Second,
		Drain:           3 * time.Second,
		Sub:             "geofence/#",
		SubQoS:          1,
		CrossEvery:      10,
		ConnectParallel: 32,
		ConnectTimeout:  60 * time.Second,
		AckTimeout:      2 * time.Second,
		Seed:            1,
	}
}

// Validate reports the first setting a run cannot use.
func (c *Config) Validate() error {
	switch {
	case c.Conns < 1 || c.Conns > 100_000:
		return fmt.Errorf("conns %d: want 1..100000", c.Conns)
	case c.DevicesPerConn < 1 || c.Conns*c.DevicesPerConn > 1<<22:
		return fmt.Errorf("devices per connection %d: want ≥ 1 and at most %d devices in all", c.DevicesPerConn, 1<<22)
	case c.QoS > 1:
		return fmt.Errorf("qos %d: want 0 or 1", c.QoS)
	case c.SubQoS > 1:
		return fmt.Errorf("subscriber qos %d: want 0 or 1", c.SubQoS)
	case c.Rate < 0 || math.IsInf(c.Rate, 0) || math.IsNaN(c.Rate):
		return fmt.Errorf("rate %v: want ≥ 0", c.Rate)
	case c.Window < 1 || c.Window > 1024 || c.Batch < 1:
		return fmt.Errorf("window %d / batch %d: want 1..1024 and ≥ 1", c.Window, c.Batch)
	case c.Burst < 1 || c.QoS > 0 && c.Burst > c.Window:
		return fmt.Errorf("burst %d: want 1..window (%d)", c.Burst, c.Window)
	case c.Workers < 1:
		return fmt.Errorf("workers %d: want ≥ 1", c.Workers)
	case c.Duration <= 0 || c.Warmup < 0 || c.Drain < 0 || c.Warmup+c.Duration+c.Drain > 10*time.Minute:
		return fmt.Errorf("warm-up %v, duration %v, drain %v: want a positive duration and 10 minutes at most in all", c.Warmup, c.Duration, c.Drain)
	case len(c.Fences) == 0:
		return errors.New("no fences")
	case c.CrossEvery < 1:
		return fmt.Errorf("cross-every %d: want ≥ 1", c.CrossEvery)
	case c.ConnectParallel < 1 || c.ConnectTimeout <= 0 || c.AckTimeout <= 0:
		return errors.New("connect parallelism, connect timeout and ack timeout must be positive")
	}
	return nil
}

// SubscriberAddr is the address the subscriber connects to: SubAddr, or
// Addr when it is empty (they differ when trackers and dashboards use
// different listeners or brokers).
func (c *Config) SubscriberAddr() string {
	if c.SubAddr != "" {
		return c.SubAddr
	}
	return c.Addr
}

// device is one simulated tracker.
type device struct {
	idx    int
	topic  string
	walk   [][]byte // payload prefixes of the cycle
	step   int      // next position in the cycle
	first  bool     // no ping sent yet
	lastTs int64    // epoch ms of the last ping: stamps strictly increase
}

// pubConn is one tracker connection.
type pubConn struct {
	c    net.Conn
	rd   *Reader
	devs []*device
	next int // next device, round robin
	buf  []byte
	pay  []byte
	dead atomic.Bool
	// full: the window is full. The worker skips the connection without
	// a lock or a clock read until an acknowledgement clears it (or it
	// looks for ack timeouts): scanning 1,000 full windows per
	// acknowledgement with a time.Now each made the generator the
	// bottleneck of the fastest brokers.
	full atomic.Bool

	mu       sync.Mutex
	nextID   uint16 // next packet id, 1..65535
	expect   uint16 // oldest packet id not acknowledged
	inflight int
	progress time.Duration // last acknowledgement (or first send into an empty window)
	wake     chan struct{} // the owning worker's
}

// marks maps (device, stamp) of the pings expected to cause a transition
// to their send instants (nanoseconds since the run started).
type marks struct {
	shards [64]struct {
		sync.Mutex
		m map[uint64]mark
	}
}

// mark is a ping expected to cause a transition.
type mark struct {
	at       int64 // send instant, ns since the run started
	measured bool  // sent in the measured window
}

func markKey(dev int, ts int64) uint64 { return uint64(dev)<<41 | uint64(ts)&(1<<41-1) }

func (m *marks) put(k uint64, mk mark) {
	s := &m.shards[k>>41%64]
	s.Lock()
	s.m[k] = mk
	s.Unlock()
}

func (m *marks) take(k uint64) (mark, bool) {
	s := &m.shards[k>>41%64]
	s.Lock()
	mk, ok := s.m[k]
	if ok {
		delete(s.m, k)
	}
	s.Unlock()
	return mk, ok
}

// pending counts the marks not yet matched: all of them, and those of
// the measured window.
func (m *marks) pending() (all, measured int) {
	for i := range m.shards {
		s := &m.shards[i]
		s.Lock()
		all += len(s.m)
		for _, mk := range s.m {
			if mk.measured {
				measured++
			}
		}
		s.Unlock()
	}
	return all, measured
}

type runner struct {
	cfg   Config
	start time.Time
	devs  []*device
	conns []*pubConn
	marks marks

	measuring atomic.Bool
	stopping  atomic.Bool

	sent, acked, lost, unexpected atomic.Int64
	expected                      atomic.Int64 // marks put while measuring
	writeErrs, readErrs           atomic.Int64
	firstErr                      atomic.Pointer[error]

	subMsgs, matched, unmatched, retained atomic.Int64
	latMu                                 sync.Mutex
	lat                                   []int64
	stamps                                *rxstamp.Reader // the subscriber's receive timestamps; nil: stamped at read
}

// payloadTail ends a ping without an accuracy: a fix then counts at its
// position alone, so the ping whose position crosses is the one that
// causes the transition (with an accuracy, a change needs a second fix
// that agrees, and a device standing still changes nothing:
// docs/fences.md); the accuracy rules are the simulator's to measure.
var payloadTail = []byte(`}`)

// keepalive of every connection, seconds: a tracker's usual. The
// subscriber, which only receives, sends a PINGREQ every keepalive/2.
const keepalive = 300

func (r *runner) fail(err error) {
	r.firstErr.CompareAndSwap(nil, &err)
}

// Run performs one bounded load run against a running broker.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Tag == "" {
		cfg.Tag = fmt.Sprintf("lg%04x", rand.Uint32()&0xffff)
	}
	if _, err := RaiseFileLimit(uint64(cfg.Conns) + 1024); err != nil {
		return nil, fmt.Errorf("raise the open-file limit: %w", err)
	}
	r := &runner{cfg: cfg, start: time.Now()}
	for i := range r.marks.shards {
		r.marks.shards[i].m = make(map[uint64]mark)
	}
	r.progressf("%s: %d connections × %d devices, QoS %d, %s, %d fences", cfg.Tag, cfg.Conns, cfg.DevicesPerConn, cfg.QoS, rateString(cfg.Rate, cfg.Burst), len(cfg.Fences))
	r.makeDevices()

	var sub *subConn
	if cfg.Sub != "" {
		var err error
		if sub, err = r.subscribe(ctx); err != nil {
			return nil, fmt.Errorf("subscriber: %w", err)
		}
		defer sub.close()
	}
	connectStart := time.Now()
	if err := r.connectAll(ctx); err != nil {
		r.closeAll()
		return nil, err
	}
	defer r.closeAll()
	connectTime := time.Since(connectStart)
	r.progressf("connected %d in %v", cfg.Conns, connectTime.Round(time.Millisecond))
	if st := cfg.Status; st != nil {
		// The drain may end early: the ETA is an upper bound.
		st.Track(r.sent.Load)
		st.Restart("loadgen", "pings", 0, cfg.Warmup+cfg.Duration+cfg.Drain)
		st.Start(200 * time.Millisecond)
		defer st.Stop()
	}

	var readers sync.WaitGroup
	for _, cn := range r.conns {
		readers.Add(1)
		go func() { defer readers.Done(); r.readAcks(cn) }()
	}

	// Workers.
	var workers sync.WaitGroup
	for w := range cfg.Workers {
		var own []*pubConn
		wake := make(chan struct{}, 1)
		for i := w; i < len(r.conns); i += cfg.Workers {
			r.conns[i].wake = wake
			own = append(own, r.conns[i])
		}
		if len(own) == 0 {
			continue
		}
		workers.Add(1)
		go func() {
			defer workers.Done()
			r.work(own, cfg.Rate*float64(len(own))/float64(len(r.conns)), wake)
		}()
	}

	res := &Result{Config: summarize(cfg), ConnectTime: connectTime}
	err := r.measure(ctx, res)
	r.stopping.Store(true)
	workers.Wait()
	r.drain(ctx, sub)
	if cfg.MetricsURL != "" {
		if m, err := probe.Scrape(ctx, cfg.MetricsURL); err == nil {
			res.fillTotals(m)
		}
	}
	r.closeAll()
	readers.Wait()
	r.finish(res)
	if err != nil {
		return res, err
	}
	if p := r.firstErr.Load(); p != nil && res.WriteErrors+res.ReadErrors > 0 {
		res.FirstError = (*p).Error()
	}
	return res, nil
}

func rateString(rate float64, burst int) string {
	switch {
	case rate == 0:
		return "unthrottled"
	case burst > 1:
		return fmt.Sprintf("paced at %.0f pings/s in writes of %d", rate, burst)
	}
	return fmt.Sprintf("paced at %.0f pings/s", rate)
}

func (r *runner) progressf(format string, args ...any) {
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "loadgen: "+format+"\n", args...)
	}
}

func (r *runner) makeDevices() {
	cfg := &r.cfg
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6c67))
	n := cfg.Conns * cfg.DevicesPerConn
	r.devs = make([]*device, n)
	// Devices sharing a fence and a crossing line share the walk.
	type walkKey struct{ f, line int }
	walks := map[walkKey][][]byte{}
	for i := range r.devs {
		f := i % len(cfg.Fences)
		line := (i / len(cfg.Fences)) % 8
		k := walkKey{f, line}
		w, ok := walks[k]
		if !ok {
			w = cfg.Fences[f].Walk(line*45+7, cfg.CrossEvery)
			walks[k] = w
		}
		r.devs[i] = &device{
			idx:   i,
			topic: "devices/" + cfg.Tag + "d" + strconv.Itoa(i) + "/telemetry",
			walk:  w,
			step:  rng.IntN(len(w)),
			first: true,
		}
	}
}

// connectAll opens every tracker connection, ConnectParallel at a time.
func (r *runner) connectAll(ctx context.Context) error {
	cfg := &r.cfg
	ctx, cancel := context.WithTimeout(ctx, cfg.ConnectTimeout)
	defer cancel()
	r.conns = make([]*pubConn, cfg.Conns)
	next := atomic.Int64{}
	var wg sync.WaitGroup
	var errOnce sync.Once
	var err error
	for range min(cfg.ConnectParallel, cfg.Conns) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= cfg.Conns || ctx.Err() != nil {
					return
				}
				cn, e := r.dial(ctx, cfg.Addr, cfg.Tag+"-c"+strconv.Itoa(i))
				if e != nil {
					errOnce.Do(func() { err = fmt.Errorf("connection %d: %w", i, e); cancel() })
					return
				}
				cn.devs = r.devs[i*cfg.DevicesPerConn : (i+1)*cfg.DevicesPerConn]
				r.conns[i] = cn
			}
		}()
	}
	wg.Wait()
	if err == nil && ctx.Err() != nil {
		err = fmt.Errorf("connect %d connections: %w", cfg.Conns, ctx.Err())
	}
	return err
}

func (r *runner) dial(ctx context.Context, addr, clientID string) (*pubConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	rd := NewReader(c, 512, 1<<16)
	connect, err := AppendConnect(nil, clientID, keepalive)
	if err != nil {
		c.Close()
		return nil, err
	}
	if _, err := c.Write(connect); err != nil {
		c.Close()
		return nil, err
	}
	code, err := rd.ReadConnack()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("CONNACK: %w", err)
	}
	if code != 0 {
		c.Close()
		return nil, fmt.Errorf("CONNACK return code %d", code)
	}
	_ = c.SetDeadline(time.Time{})
	return &pubConn{c: c, rd: rd, nextID: 1, expect: 1, buf: make([]byte, 0, 256)}, nil
}

// idDist is how many packet ids lie from a up to b, in the id space
// 1..65535.
func idDist(a, b uint16) int { return (int(b) - int(a) + 65535) % 65535 }

func idAdd(a uint16, n int) uint16 { return uint16((int(a)-1+n)%65535 + 1) }

// readAcks reads a tracker connection's PUBACKs. A broker acknowledges a
// connection's QoS 1 publishes in order, so an acknowledgement also
// settles every older id as refused (not acknowledged).
func (r *runner) readAcks(cn *pubConn) {
	for {
		fh, body, err := cn.rd.Next()
		if err != nil {
			if !r.stopping.Load() {
				r.readErrs.Add(1)
				r.fail(fmt.Errorf("read: %w", err))
			}
			cn.dead.Store(true)
			return
		}
		if fh.Type == packets.Puback {
			id, err := ParseID(fh, body)
			if err != nil {
				continue
			}
			now := time.Since(r.start)
			cn.mu.Lock()
			if gap := idDist(cn.expect, id); gap < cn.inflight {
				r.lost.Add(int64(gap))
				r.acked.Add(1)
				cn.inflight -= gap + 1
				cn.expect = idAdd(id, 1)
				cn.progress = now
				cn.full.Store(false)
			} else {
				r.unexpected.Add(1)
			}
			cn.mu.Unlock()
		}
		if cn.rd.Buffered() == 0 {
			select {
			case cn.wake <- struct{}{}:
			default:
			}
		}
	}
}

// work sends pings over conns: paced at rate (pings/s), or as fast as the
// windows allow when rate is 0.
func (r *runner) work(conns []*pubConn, rate float64, wake chan struct{}) {
	cfg := &r.cfg
	begin := time.Now()
	var sent int64
	cur := 0
	idle := time.NewTimer(time.Hour)
	defer idle.Stop()
	var lastCheck time.Time
	for !r.stopping.Load() {
		// Full windows are looked at for ack timeouts every 10 ms, well
		// inside --ack-timeout.
		now := time.Now()
		checkFull := now.Sub(lastCheck) >= 10*time.Millisecond
		if checkFull {
			lastCheck = now
		}
		budget := len(conns) * cfg.Batch
		if rate > 0 {
			// Paced pings leave in whole bursts: a write of cfg.Burst
			// pings on one connection once that many are due.
			burst := int64(cfg.Burst)
			due := (int64(rate*time.Since(begin).Seconds()) - sent) / burst * burst
			if due <= 0 {
				wait := time.Duration(float64(sent+burst)/rate*float64(time.Second)) - time.Since(begin)
				time.Sleep(max(wait, 100*time.Microsecond))
				continue
			}
			budget = int(min(due, int64(len(conns))*burst))
		}
		progress := 0
		for tried := 0; tried < len(conns) && budget > 0; tried++ {
			cn := conns[cur]
			cur = (cur + 1) % len(conns)
			n := min(cfg.Burst, budget)
			if rate == 0 {
				n = min(cfg.Batch, budget)
			}
			k := r.send(cn, n, checkFull)
			progress += k
			budget -= k
		}
		sent += int64(progress)
		if progress == 0 {
			// Every window is full (or every connection dead): wait for
			// an acknowledgement, or look again for ack timeouts.
			idle.Reset(time.Millisecond)
			select {
			case <-wake:
			case <-idle.C:
			}
		}
	}
}

// send writes up to n pings on cn in one write and returns how many. A
// connection with a full window is passed over unless checkFull.
func (r *runner) send(cn *pubConn, n int, checkFull bool) int {
	cfg := &r.cfg
	if cn.dead.Load() || (cn.full.Load() && !checkFull) {
		return 0
	}
	t := time.Now()
	mono := t.Sub(r.start)
	var id uint16
	if cfg.QoS > 0 {
		cn.mu.Lock()
		if cn.inflight > 0 && mono-cn.progress > cfg.AckTimeout {
			// The tail was refused without an acknowledgement.
			r.lost.Add(int64(cn.inflight))
			cn.inflight = 0
			cn.expect = cn.nextID
		}
		n = min(n, cfg.Window-cn.inflight)
		if n <= 0 {
			cn.full.Store(true)
			cn.mu.Unlock()
			return 0
		}
		if cn.inflight == 0 {
			cn.progress = mono
		}
		id = cn.nextID
		cn.nextID = idAdd(id, n)
		cn.inflight += n
		cn.full.Store(cn.inflight >= cfg.Window)
		cn.mu.Unlock()
	}
	ms := t.UnixMilli()
	measuring := r.measuring.Load()
	buf := cn.buf[:0]
	for i := range n {
		d := cn.devs[cn.next]
		cn.next++
		if cn.next == len(cn.devs) {
			cn.next = 0
		}
		ts := max(ms, d.lastTs+1)
		d.lastTs = ts
		s := d.step
		d.step++
		if d.step == len(d.walk) {
			d.step = 0
		}
		inside := s < cfg.CrossEvery
		causes := inside
		if !d.first {
			causes = s == 0 || s == cfg.CrossEvery
		}
		d.first = false
		if causes && r.cfg.Sub != "" {
			r.marks.put(markKey(d.idx, ts), mark{at: int64(mono), measured: measuring})
			if measuring {
				r.expected.Add(1)
			}
		}
		p := append(cn.pay[:0], d.walk[s]...)
		p = strconv.AppendInt(p, ts, 10)
		p = append(p, payloadTail...)
		cn.pay = p
		var err error
		if buf, err = AppendPublish(buf, d.topic, cfg.QoS, idAdd(id, i), p); err != nil {
			r.fail(err) // a packet id of 0: a bug of the id arithmetic
			cn.dead.Store(true)
			return 0
		}
	}
	cn.buf = buf
	if _, err := cn.c.Write(buf); err != nil {
		if !r.stopping.Load() {
			r.writeErrs.Add(1)
			r.fail(fmt.Errorf("write: %w", err))
		}
		cn.dead.Store(true)
		return 0
	}
	r.sent.Add(int64(n))
	return n
}

// snapshot is the state at one instant of the measurement.
type snapshot struct {
	at       time.Time
	sent     int64
	acked    int64
	broker   probe.Metrics
	proc     probe.ProcStat
	self     probe.ProcStat
	cpus     probe.CPUTimes
	procErr  error
	metricOK bool
}

func (r *runner) snap(ctx context.Context) snapshot {
	s := snapshot{sent: r.sent.Load(), acked: r.acked.Load()}
	if r.cfg.MetricsURL != "" {
		if m, err := probe.Scrape(ctx, r.cfg.MetricsURL); err == nil {
			s.broker, s.metricOK = m, true
		}
	}
	if r.cfg.PID > 0 {
		s.proc, s.procErr = probe.ReadProc(r.cfg.PID)
	}
	s.self, _ = probe.ReadProc(0)
	s.cpus, _ = probe.ReadCPUTimes()
	s.at = time.Now()
	return s
}

// measure waits out the warm-up, then measures over the window.
func (r *runner) measure(ctx context.Context, res *Result) error {
	sleep := func(d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := sleep(r.cfg.Warmup); err != nil {
		return err
	}
	s0 := r.snap(ctx)
	r.measuring.Store(true)
	if r.cfg.OnMeasure != nil {
		go r.cfg.OnMeasure()
	}
	end := s0.at.Add(r.cfg.Duration)
	var rssMax int64
	for {
		left := time.Until(end)
		if left <= 0 {
			break
		}
		if err := sleep(min(left, 250*time.Millisecond)); err != nil {
			return err
		}
		if r.cfg.PID > 0 {
			if p, err := probe.ReadProc(r.cfg.PID); err == nil {
				rssMax = max(rssMax, p.RSS)
			}
		}
	}
	r.measuring.Store(false)
	s1 := r.snap(ctx)
	res.window(s0, s1, rssMax)
	r.progressf("measured %.0f pings/s over %v", res.PingsPerSec, res.Window.Round(time.Millisecond))
	return nil
}

// drain waits for the in-flight acknowledgements and the expected
// transitions, for cfg.Drain at most.
func (r *runner) drain(ctx context.Context, sub *subConn) {
	deadline := time.Now().Add(r.cfg.Drain)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		inflight := 0
		if r.cfg.QoS > 0 {
			for _, cn := range r.conns {
				cn.mu.Lock()
				if !cn.dead.Load() {
					inflight += cn.inflight
				}
				cn.mu.Unlock()
			}
		}
		if _, measured := r.marks.pending(); inflight == 0 && (sub == nil || measured == 0) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *runner) closeAll() {
	r.stopping.Store(true)
	var wg sync.WaitGroup
	for i := 0; i < len(r.conns); i += 256 {
		part := r.conns[i:min(i+256, len(r.conns))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, cn := range part {
				if cn == nil || cn.c == nil {
					continue
				}
				_ = cn.c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = cn.c.Write(AppendDisconnect(nil))
				cn.c.Close()
			}
		}()
	}
	wg.Wait()
}

func (r *runner) finish(res *Result) {
	res.Sent = r.sent.Load()
	res.Acked = r.acked.Load()
	res.Unacked = r.lost.Load()
	res.WriteErrors = r.writeErrs.Load()
	res.ReadErrors = r.readErrs.Load()
	if r.cfg.QoS > 0 {
		for _, cn := range r.conns {
			cn.mu.Lock()
			res.Unacked += int64(cn.inflight)
			cn.mu.Unlock()
		}
	}
	res.Expected = r.expected.Load()
	res.SubMessages = r.subMsgs.Load()
	res.Matched = r.matched.Load()
	res.Unmatched = r.unmatched.Load()
	_, measured := r.marks.pending()
	res.Missing = int64(measured)
	r.latMu.Lock()
	lat := slices.Clone(r.lat)
	r.latMu.Unlock()
	res.setLatency(lat)
	res.LatReceipt = "read"
	if r.stamps != nil {
		res.LatReceipt = "kernel"
	}
}

// subConn is the dashboard: one subscription, acknowledging at QoS 1.
type subConn struct {
	c    net.Conn
	done chan struct{}
	stop chan struct{}
}

// ping keeps the subscription alive while it only receives.
func (s *subConn) ping() {
	t := time.NewTicker(keepalive / 2 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if _, err := s.c.Write(AppendPingreq(nil)); err != nil {
				return
			}
		case <-s.stop:
			return
		}
	}
}

func (s *subConn) close() {
	close(s.stop)
	_ = s.c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = s.c.Write(AppendDisconnect(nil))
	s.c.Close()
	<-s.done
}

func (r *runner) subscribe(ctx context.Context) (*subConn, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cn, err := r.dial(ctx, r.cfg.SubscriberAddr(), r.cfg.Tag+"-sub")
	if err != nil {
		return nil, err
	}
	s := &subConn{c: cn.c, done: make(chan struct{})}
	sub, err := AppendSubscribe(nil, 1, r.cfg.Sub, r.cfg.SubQoS)
	if err != nil {
		cn.c.Close()
		return nil, err
	}
	if _, err := cn.c.Write(sub); err != nil {
		cn.c.Close()
		return nil, err
	}
	var src io.Reader = cn.c
	if r.stamps = rxstamp.New(cn.c, r.start); r.stamps != nil {
		src = r.stamps
	}
	rd := NewReader(src, 64<<10, 1<<20)
	_ = cn.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		fh, body, err := rd.Next()
		if err != nil {
			cn.c.Close()
			return nil, fmt.Errorf("SUBACK: %w", err)
		}
		if fh.Type == packets.Suback {
			if codes, err := ParseSuback(fh, body); err != nil || len(codes) != 1 || codes[0] > 2 {
				cn.c.Close()
				return nil, fmt.Errorf("subscription to %q refused", r.cfg.Sub)
			}
			break
		}
	}
	_ = cn.c.SetReadDeadline(time.Time{})
	s.stop = make(chan struct{})
	go func() {
		defer close(s.done)
		r.readSub(s.c, rd)
	}()
	go s.ping()
	return s, nil
}

func (r *runner) readSub(c net.Conn, rd *Reader) {
	var acks []byte
	var lats []int64
	flush := func() {
		if len(acks) > 0 {
			if _, err := c.Write(acks); err != nil && !r.stopping.Load() {
				r.fail(fmt.Errorf("subscriber write: %w", err))
			}
			acks = acks[:0]
		}
		if len(lats) > 0 {
			r.latMu.Lock()
			r.lat = append(r.lat, lats...)
			r.latMu.Unlock()
			lats = lats[:0]
		}
	}
	defer flush()
	for {
		fh, body, err := rd.Next()
		if err != nil {
			if !r.stopping.Load() {
				r.readErrs.Add(1)
				r.fail(fmt.Errorf("subscriber read: %w", err))
			}
			return
		}
		if fh.Type == packets.Publish {
			now := int64(time.Since(r.start))
			if r.stamps != nil && r.stamps.At() >= 0 && r.stamps.At() <= now {
				now = r.stamps.At() // when it reached the socket
			}
			p, err := ParsePublish(fh, body)
			if err != nil {
				continue
			}
			if p.FixedHeader.Qos == 1 {
				acks = AppendPuback(acks, p.PacketID)
			}
			if p.FixedHeader.Retain {
				r.retained.Add(1) // from before the subscription
			} else {
				r.subMsgs.Add(1)
				if dev, ts, ok := r.parseMessage(p.TopicName, p.Payload); ok {
					if mk, ok := r.marks.take(markKey(dev, ts)); ok {
						if mk.measured {
							r.matched.Add(1)
							lats = append(lats, now-mk.at)
						}
					} else if !strings.HasPrefix(p.TopicName, "devices/") {
						r.unmatched.Add(1)
					}
				}
			}
		}
		if rd.Buffered() == 0 {
			flush()
		}
	}
}

// parseMessage finds the device index and the ping stamp of a routed
// ping (devices/<id>/telemetry) or a transition (<prefix>/<fence>/<id>).
func (r *runner) parseMessage(topic string, payload []byte) (dev int, ts int64, ok bool) {
	var id string
	if rest, found := strings.CutPrefix(topic, "devices/"); found {
		id, _, _ = strings.Cut(rest, "/")
	} else {
		id = topic[strings.LastIndexByte(topic, '/')+1:]
	}
	num, found := strings.CutPrefix(id, r.cfg.Tag+"d")
	if !found {
		return 0, 0, false
	}
	d, err := strconv.Atoi(num)
	if err != nil {
		return 0, 0, false
	}
	i := bytes.Index(payload, []byte(`"ts":`))
	if i < 0 {
		return 0, 0, false
	}
	j := i + 5
	for j < len(payload) && payload[j] >= '0' && payload[j] <= '9' {
		j++
	}
	ts, err = strconv.ParseInt(string(payload[i+5:j]), 10, 64)
	return d, ts, err == nil
}
