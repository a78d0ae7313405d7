package cluster

import (
	"context"
	"time"
)

// HedgeEvery is how often the cluster's requests that NATS may leave
// unanswered during an election go out again while none has answered.
const HedgeEvery = 250 * time.Millisecond

// Hedged calls try with ctx, and again every every while no call has
// succeeded, the earlier ones still waiting; it returns nil at the first
// success, else once ctx is done the last call's error (ctx's if none
// ended). A request sent while NATS elects the leader it needs is never
// answered, so a caller that waited out its timeout before trying again
// stayed blocked up to that long after the leader was back; with a call
// every every, the first one sent after the election is answered at once.
// try must be safe for concurrent use; calls still running when Hedged
// returns see their context cancelled.
func Hedged(ctx context.Context, every time.Duration, try func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended := make(chan error)
	call := func() {
		err := try(ctx)
		select {
		case ended <- err:
		case <-ctx.Done():
		}
	}
	go call()
	t := time.NewTicker(every)
	defer t.Stop()
	var last error
	for {
		select {
		case err := <-ended:
			if err == nil {
				return nil
			}
			last = err
		case <-t.C:
			go call()
		case <-ctx.Done():
			if last == nil {
				return ctx.Err()
			}
			return last
		}
	}
}
