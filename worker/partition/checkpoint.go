package partition

import (
	"context"
	"errors"
	"time"

	"github.com/edgefence/edgefence/worker/checkpoint"
)

// saveCheckpoint stores pt's state after its last applied message.
func (pt *Partition) saveCheckpoint(ctx context.Context) error {
	if pt.tainted || pt.applied != pt.seq {
		return errors.New("the engine is ahead of what was published: not saved")
	}
	if pt.unsureCheckpoint {
		// Another owner may have saved a later one while the lease
		// lapsed: not replaced by an earlier one, whose fence version
		// may be collected already.
		stored, err := pt.o.Store.Load(ctx, pt.n)
		if err != nil {
			return err
		}
		if stored != nil && stored.Seq > pt.seq {
			pt.lastCkpt = time.Now() // again after the period
			return nil
		}
		pt.unsureCheckpoint = false
	}
	hs, err := pt.historySeq(ctx)
	if err != nil {
		return err
	}
	ck := checkpoint.State{Seq: pt.seq, Clock: pt.clock, Sent: pt.sent, HistSeq: hs, Fences: pt.fenceVer, Snap: pt.proc.Snapshot(),
		Frames: pt.reader.Frames()}
	data, err := checkpoint.Encode(&ck)
	if err != nil {
		return err
	}
	if err := pt.check(ctx); err != nil {
		return err
	}
	if err := pt.o.Store.Put(ctx, pt.n, &ck, data); err != nil {
		return err
	}
	if ck.Fences != pt.savedVer {
		// The version before may be needed no more.
		pt.savedVer = ck.Fences
		pt.o.FencesSaved()
	}
	pt.lastCkpt = time.Now()
	pt.o.Metrics.CheckpointAt[pt.n].Store(pt.lastCkpt.UnixNano())
	pt.o.Metrics.Checkpoints.Inc()
	return nil
}
