package partition

import (
	"context"
	"time"

	"github.com/edgefence/edgefence/worker/checkpoint"
)

// switchFences applies a fence message: the partition's engine, advanced
// to the message's instant under the old set, takes the new one, and
// devices inside a removed fence get their EXIT now, as on serve.
func (pt *Partition) switchFences(ctx context.Context, ver string, now time.Time) error {
	if ver == pt.fenceVer {
		return nil
	}
	s, err := pt.o.Store.FenceSet(ctx, ver)
	if err != nil {
		return err
	}
	pt.fences, pt.fenceVer = s, ver
	pt.proc.Reconcile(now)
	pt.o.Log.Info("fences switched", "partition", pt.n, "version", checkpoint.Short(ver), "fences", s.Len())
	return nil
}
