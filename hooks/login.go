package hooks

import (
	"log/slog"
	"net"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/mochi-mqtt/server/v2/packets"
	"golang.org/x/time/rate"

	"github.com/edgefence/edgefence/auth"
)

// Login bounds. A password verification costs what its hash asks for
// (Argon2id: tens of MiB and tens of milliseconds), and anyone who can
// reach the listener can ask for one.
const (
	// loginWait is how long a login waits for a verification slot before
	// it is told the server is busy.
	loginWait = time.Second
	// Each source address may fail backoffBurst logins at once, then one
	// every backoffEvery: beyond that its logins are refused (0x9F) without
	// a hash, unless the password is one already verified.
	backoffBurst = 20
	backoffEvery = 2 * time.Second
	// backoffMax bounds the addresses remembered; an address's entry is
	// dropped once its allowance has refilled, and new addresses share
	// one allowance while the table is full.
	backoffMax = 10_000
	// A user in the file none of whose logins failed for standingAfter is
	// in good standing: its logins wait for a verification slot ahead of
	// all others (verifySlots).
	standingAfter = time.Minute
)

// loginGate bounds the cost of logins: at most slots verifications at
// once, one verification per login (a success is cached by auth.File), and
// a per-source-address back-off after failures. Failures are charged to
// the username too: a login for a user in the file whose logins have not
// failed lately waits ahead of the others, so that a flood of bogus logins
// does not turn away cold legitimate ones.
type loginGate struct {
	users *auth.File
	slots *verifySlots
	wait  time.Duration // loginWait; tests shorten it
	every rate.Limit    // an address's failures refill at backoffEvery; tests slow it
	hash  uint64        // bytes one verification allocates

	mu        sync.Mutex
	addrs     map[string]*rate.Limiter // source address -> failure allowance
	overflow  *rate.Limiter            // shared by new addresses while addrs is full
	lastSweep time.Time
	failedAt  map[string]time.Time // user in the file -> its last failed login

	ok, bad, busy, backoff, verified *metrics.Counter
	logged                           atomic.Int64 // second of the last refusal logged
}

// newLoginGate returns the gate of users (nil for anonymous access), its
// counters in set (nil: counted nowhere).
func newLoginGate(users *auth.File, set *metrics.Set) *loginGate {
	if users == nil {
		return nil
	}
	counter := func(name string) *metrics.Counter {
		if set == nil {
			return new(metrics.Counter)
		}
		return set.NewCounter(name)
	}
	return &loginGate{
		users:    users,
		wait:     loginWait,
		every:    rate.Every(backoffEvery),
		hash:     uint64(users.VerifyMemory()) << 10,
		slots:    newVerifySlots(users.VerifySlots(runtime.GOMAXPROCS(0))),
		addrs:    map[string]*rate.Limiter{},
		failedAt: map[string]time.Time{},
		overflow: rate.NewLimiter(rate.Every(backoffEvery), backoffBurst),
		ok:       counter(`edgefence_logins_total{result="ok"}`),
		bad:      counter(`edgefence_logins_total{result="bad"}`),
		busy:     counter(`edgefence_logins_total{result="busy"}`),
		backoff:  counter(`edgefence_logins_total{result="backoff"}`),
		verified: counter(`edgefence_password_verifications_total`),
	}
}

// check decides a password login from remote.
func (g *loginGate) check(name string, password []byte, remote string) packets.Code {
	if g.users.Cached(name, password) != nil {
		g.ok.Inc()
		return packets.CodeSuccess
	}
	host := remoteHost(remote)
	if !g.mayTry(host) {
		g.backoff.Inc()
		return packets.ErrConnectionRateExceeded
	}
	if !g.slots.acquire(g.wait, g.standing(name)) {
		g.busy.Inc()
		return packets.ErrServerBusy
	}
	u := g.users.Verify(name, password)
	g.giveBack()
	g.slots.release()
	g.verified.Inc()
	if u == nil {
		g.failed(host, name)
		g.bad.Inc()
		return packets.ErrBadUsernameOrPassword
	}
	g.ok.Inc()
	return packets.CodeSuccess
}

// giveBack returns a verification's memory, garbage now, to the OS
// before the slot is free, when it is a large part of the heap (a small
// process's: a quiet edge box): otherwise the heap grows by the hash's
// worth and the GC's headroom over it, and the process keeps that (14 →
// 32 MB against 21 → 58 MB under a login flood, docs/security.md). On a
// large heap the hash is lost in the headroom, and a forced collection
// would cost more than it gives.
func (g *loginGate) giveBack() {
	if g.hash < 1<<20 {
		return // bcrypt: 4 KiB
	}
	s := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() == rtmetrics.KindUint64 && s[0].Value.Uint64() <= 4*g.hash {
		debug.FreeOSMemory()
	}
}

// mayTry reports whether host has failures left in its allowance.
func (g *loginGate) mayTry(host string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	l := g.addrs[host]
	if l == nil {
		return true // no failure remembered
	}
	return l.Tokens() >= 1
}

// standing reports whether name is a user in the file none of whose
// logins failed for standingAfter.
func (g *loginGate) standing(name string) bool {
	if g.users.User(name) == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	at, ok := g.failedAt[name]
	return !ok || time.Since(at) >= standingAfter
}

// failed takes one failure from host's allowance, and notes it against
// name if that is a user in the file (bounded by the file: other names
// are never in good standing).
func (g *loginGate) failed(host, name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	if g.users.User(name) != nil {
		g.failedAt[name] = now
	}
	l := g.addrs[host]
	if l == nil {
		if len(g.addrs) >= backoffMax {
			g.sweep(now)
		}
		if len(g.addrs) >= backoffMax {
			g.overflow.AllowN(now, 1)
			return
		}
		l = rate.NewLimiter(g.every, backoffBurst)
		g.addrs[host] = l
	}
	l.AllowN(now, 1)
	if now.Sub(g.lastSweep) > time.Minute {
		g.sweep(now)
	}
}

// sweep forgets the addresses whose allowance has refilled: a new entry
// would be the same.
func (g *loginGate) sweep(now time.Time) {
	g.lastSweep = now
	for h, l := range g.addrs {
		if l.TokensAt(now) >= backoffBurst {
			delete(g.addrs, h)
		}
	}
}

// logRefusal logs a refused login, one line a second at most: a flood of
// bogus logins must not flood the log (edgefence_logins_total counts them
// all).
func (g *loginGate) logRefusal(log *slog.Logger, code packets.Code, name, remote string) {
	now := time.Now().Unix()
	if last := g.logged.Load(); last == now || !g.logged.CompareAndSwap(last, now) {
		return
	}
	msg := "refused connection: bad username or password"
	switch code {
	case packets.ErrServerBusy:
		msg = "refused connection: too many password verifications at once (server busy)"
	case packets.ErrConnectionRateExceeded:
		msg = "refused connection: too many failed logins from this address (back-off)"
	}
	log.Warn(msg+"; further refusals this second are only counted in edgefence_logins_total",
		"username", name, "remote", remote, "reason_code", code.Code)
}

// remoteHost is the address of remote without its port.
func remoteHost(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}
