package cluster

import (
	"cmp"
	"context"
	"sync"
	"time"
)

// HedgeEvery is how often the cluster's requests that NATS may leave
// unanswered during an election go out again while none has answered.
const HedgeEvery = 250 * time.Millisecond

// Hedged calls try with ctx, and again every every while no call has
// succeeded, the earlier ones still waiting; it returns the first
// success's value, else once ctx is done the last call's error (ctx's if
// none ended). A request sent while NATS elects the leader it needs is
// never answered, so a caller that waited out its timeout before trying
// again stayed blocked up to that long after the leader was back; with a
// call every every, the first one sent after the election is answered at
// once. try must be safe for concurrent use and must return soon after
// its context ends: once it has an answer, Hedged cancels the calls
// still running and waits for them, so that none reads what the caller
// changes next; a value one of them returns is passed to drop, if not
// nil.
func Hedged[T any](ctx context.Context, every time.Duration, try func(context.Context) (T, error), drop func(T)) (T, error) {
	ctx, cancel := context.WithCancel(ctx)
	var calls sync.WaitGroup
	defer calls.Wait() // after cancel: deferred calls run last first
	defer cancel()
	type result struct {
		v   T
		err error
	}
	ended := make(chan result)
	call := func() {
		if ctx.Err() != nil {
			return // started by a tick as the answer came
		}
		v, err := try(ctx)
		select {
		case ended <- result{v, err}:
		case <-ctx.Done():
			if err == nil && drop != nil {
				drop(v)
			}
		}
	}
	calls.Go(call)
	t := time.NewTicker(every)
	defer t.Stop()
	var last error
	for {
		select {
		case r := <-ended:
			if r.err == nil {
				return r.v, nil
			}
			last = r.err
		case <-t.C:
			calls.Go(call)
		case <-ctx.Done():
			var zero T
			return zero, cmp.Or(last, ctx.Err())
		}
	}
}
