package cluster_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgefence/edgefence/worker/cluster"
)

// A request sent during an election is never answered; the one sent after
// it is. Hedged returns with that one, not after the first's timeout.
func TestHedgedAnsweredByALaterCallWhileTheFirstHangs(t *testing.T) {
	defer goleak.VerifyNone(t)
	var calls atomic.Int32
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := cluster.Hedged(ctx, 20*time.Millisecond, func(c context.Context) error {
		if calls.Add(1) < 3 {
			<-c.Done() // the election's request: unanswered until given up
			return c.Err()
		}
		return nil
	})
	// The hanging calls end only with ctx: a caller that waited for
	// them before trying again would fail here.
	if err != nil {
		t.Fatalf("Hedged: %v, want nil", err)
	}
	if n := calls.Load(); n < 3 {
		t.Fatalf("%d calls, want at least 3", n)
	}
}

// Refused every time: the last refusal is returned when ctx ends, so that
// callers tell a refusal from an unanswered request (Unanswered).
func TestHedgedReturnsTheLastErrorWhenNoCallSucceeds(t *testing.T) {
	defer goleak.VerifyNone(t)
	refused := errors.New("refused")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := cluster.Hedged(ctx, 10*time.Millisecond, func(context.Context) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("Hedged: %v, want %v", err, refused)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	err := cluster.Hedged(ctx2, 10*time.Millisecond, func(c context.Context) error { <-c.Done(); return c.Err() })
	if !cluster.Unanswered(err) {
		t.Fatalf("every call unanswered: %v, want an error Unanswered reports", err)
	}
}

// The first call succeeding is the only call.
func TestHedgedCallsOnceWhenAnswered(t *testing.T) {
	defer goleak.VerifyNone(t)
	var calls atomic.Int32
	if err := cluster.Hedged(context.Background(), time.Hour, func(context.Context) error { calls.Add(1); return nil }); err != nil || calls.Load() != 1 {
		t.Fatalf("Hedged: %v after %d calls, want nil after 1", err, calls.Load())
	}
}
