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
	v, err := cluster.Hedged(ctx, 20*time.Millisecond, func(c context.Context) (int32, error) {
		n := calls.Add(1)
		if n < 3 {
			<-c.Done() // the election's request: unanswered until given up
			return 0, c.Err()
		}
		return n, nil
	}, nil)
	// The hanging calls end only with ctx: a caller that waited for
	// them before trying again would fail here.
	if err != nil || v < 3 {
		t.Fatalf("Hedged: %d, %v; want the third call's answer", v, err)
	}
}

// Refused every time: the last refusal is returned when ctx ends, so that
// callers tell a refusal from an unanswered request (Unanswered).
func TestHedgedReturnsTheLastErrorWhenNoCallSucceeds(t *testing.T) {
	defer goleak.VerifyNone(t)
	refused := errors.New("refused")
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := cluster.Hedged(ctx, 10*time.Millisecond, func(context.Context) (int, error) { return 0, refused }, nil); !errors.Is(err, refused) {
		t.Fatalf("Hedged: %v, want %v", err, refused)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	_, err := cluster.Hedged(ctx2, 10*time.Millisecond, func(c context.Context) (int, error) { <-c.Done(); return 0, c.Err() }, nil)
	if !cluster.Unanswered(err) {
		t.Fatalf("every call unanswered: %v, want an error Unanswered reports", err)
	}
}

// The first call succeeding is the only call.
func TestHedgedCallsOnceWhenAnswered(t *testing.T) {
	defer goleak.VerifyNone(t)
	var calls atomic.Int32
	if _, err := cluster.Hedged(context.Background(), time.Hour, func(context.Context) (int, error) { calls.Add(1); return 1, nil }, nil); err != nil || calls.Load() != 1 {
		t.Fatalf("Hedged: %v after %d calls, want nil after 1", err, calls.Load())
	}
}

// Two calls succeed: the first answer is returned and the other is
// dropped (a consumer made twice is stopped once), never lost silently.
func TestHedgedDropsALaterAnswer(t *testing.T) {
	defer goleak.VerifyNone(t)
	var calls atomic.Int32
	dropped := make(chan int32, 1)
	v, err := cluster.Hedged(context.Background(), 5*time.Millisecond, func(c context.Context) (int32, error) {
		n := calls.Add(1)
		if n == 1 {
			<-c.Done() // answered, but only after the second call's answer
			return n, nil
		}
		if n == 2 {
			return n, nil
		}
		<-c.Done()
		return 0, c.Err()
	}, func(n int32) { dropped <- n })
	if err != nil || v != 2 {
		t.Fatalf("Hedged: %d, %v; want the second call's 2", v, err)
	}
	if n := <-dropped; n != 1 {
		t.Fatalf("dropped %d, want the first call's 1", n)
	}
}

// No call is running once Hedged has returned: a caller may change what
// its calls read (a partition's output buffer, once put) as soon as it
// has the answer. Calls hanging until their context ends take a moment
// to give up, as a NATS request does.
func TestHedgedReturnsAfterEveryCallEnded(t *testing.T) {
	defer goleak.VerifyNone(t)
	var calls, running atomic.Int32
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cluster.Hedged(ctx, 5*time.Millisecond, func(c context.Context) (int32, error) {
		running.Add(1)
		defer running.Add(-1)
		if n := calls.Add(1); n == 4 {
			return n, nil
		}
		<-c.Done()
		time.Sleep(20 * time.Millisecond)
		return 0, c.Err()
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := running.Load(); n != 0 {
		t.Fatalf("%d of %d calls still running when Hedged returned", n, calls.Load())
	}
}
