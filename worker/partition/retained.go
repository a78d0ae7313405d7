package partition

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/edgefence/edgefence/worker/cluster"
	"github.com/edgefence/edgefence/worker/wave"
)

// putRetained writes the wave's outputs marked in put to the retained
// bucket at once and waits for every write, as the wave's history
// records are: a wave holds one output per device, and the next wave
// starts after, so each device's values are written in its order. A
// write that fails is made again until it is stored or the lease may
// have run out; writing a value twice changes nothing.
func (pt *Partition) putRetained(ctx context.Context, outs []wave.Out, put []bool) error {
	var wg sync.WaitGroup
	errs := make([]error, len(outs))
	for i := range outs {
		if put[i] {
			wg.Go(func() { errs[i] = pt.putOne(ctx, &outs[i]) })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (pt *Partition) putOne(ctx context.Context, o *wave.Out) error {
	m := pt.o.Metrics
	put := func(c context.Context) (struct{}, error) {
		return struct{}{}, cluster.PutRetained(c, pt.js, pt.o.Conn.Retained, o.Topic, o.Body, o.ID)
	}
	for {
		c, cancel := context.WithTimeout(ctx, 5*time.Second)
		var err error
		if o.ID != "" && len(o.Body) > 0 {
			// Sent again every 250 ms while unanswered (a put sent during
			// the bucket's election never is): the copies carry the
			// output's message id, so a late one is a duplicate the
			// bucket drops, never an old value over the next. A delete
			// carries none, and goes one at a time.
			_, err = cluster.Hedged(c, cluster.HedgeEvery, put, nil)
		} else {
			_, err = put(c)
		}
		cancel()
		if err == nil {
			m.RetainedPuts.Inc()
			return nil
		}
		m.RetainedRetries.Inc()
		pt.logErr("retained bucket write failed, retrying", err)
		if !pt.mayFinish() {
			return ErrLeaseLost
		}
		sleep(ctx, 200*time.Millisecond)
	}
}

// kvHolds reports whether the retained bucket holds o's body as its
// topic's value; a failed read counts as not (writing it again is
// harmless).
func (pt *Partition) kvHolds(ctx context.Context, o *wave.Out) bool {
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	held, err := cluster.HoldsRetained(c, pt.o.Conn.Retained, o.Topic, o.Body)
	return err == nil && held
}
