package hooks

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/ingest"
)

// A key's bucket lives until it has refilled: dropping it then loses
// nothing, so an idle key costs no memory and a busy one keeps its debt.
func TestKeyTableForgetsOnlyRefilledKeys(t *testing.T) {
	var kt keyTable
	kt.init()
	l := auth.Limit{Rate: 10, Burst: 2}
	t0 := time.Unix(1000, 0)
	for i, want := range []takeResult{taken, taken, refused} {
		if got := kt.take("dev", l, t0); got != want {
			t.Fatalf("take %d: %v, want %v", i, got, want)
		}
	}
	kt.take("other", l, t0)
	// 11 s later (past a sweep): "dev" refilled long ago, so it is gone,
	// and a take starts a full bucket again.
	t1 := t0.Add(sweepEvery + time.Second)
	kt.take("dev", l, t1)
	n := 0
	for i := range kt.shards {
		n += len(kt.shards[i].buckets)
	}
	if n > 2 {
		t.Errorf("%d keys kept after a sweep, want at most the 2 just used", n)
	}
	// A key in debt is kept across a sweep: reconnecting does not reset it.
	slow := auth.Limit{Rate: 0.001, Burst: 1}
	kt.take("flooder", slow, t1)
	if got := kt.take("flooder", slow, t1.Add(2*sweepEvery)); got != refused {
		t.Errorf("a key in debt after two sweep periods: %v, want refused", got)
	}
}

// The table holds at most maxKeys: beyond, a new key is refused (full)
// until old ones refill.
func TestKeyTableIsBounded(t *testing.T) {
	var kt keyTable
	kt.init()
	slow := auth.Limit{Rate: 0.001, Burst: 1}
	t0 := time.Unix(1000, 0)
	fulls := 0
	for i := range maxKeys + 1000 {
		if kt.take(fmt.Sprint("d", i), slow, t0) == full {
			fulls++
		}
	}
	n := 0
	for i := range kt.shards {
		n += len(kt.shards[i].buckets)
	}
	if n > maxKeys || fulls < 1000 {
		t.Errorf("%d keys kept (max %d), %d refused as full (want ≥ 1000)", n, maxKeys, fulls)
	}
}

// The limit is checked on every publish: admitting a ping must not
// allocate once its device's bucket exists.
func TestRateLimitOnPublishDoesNotAllocate(t *testing.T) {
	h := NewRateLimit(auth.Limit{Rate: 1e9, Burst: 1 << 30}, nil, ingest.DefaultFilters(), metrics.NewSet(), slog.New(slog.DiscardHandler))
	cl := &mqtt.Client{ID: "gateway"}
	pks := telemetryPackets(64)
	for _, pk := range pks {
		h.OnPublish(cl, pk) // the buckets
	}
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		if _, err := h.OnPublish(cl, pks[i%len(pks)]); err != nil {
			t.Fatal(err)
		}
		i++
	})
	if allocs != 0 {
		t.Fatalf("OnPublish allocates %.1f times per ping, want 0", allocs)
	}
}
