package evaluator

import (
	"time"

	"github.com/edgefence/edgefence/evaluator/clock"
)

// Watching: a device someone inspects keeps its last pings as they
// arrived, with why each was clamped, in a ring of its own. The ring lives
// beside the device record, not in it, so a device nobody looks at costs
// nothing more, and the per-ping path pays one length check while no
// device is watched.

// watchRing is how many arrivals a watched device keeps.
const watchRing = 32

// maxWatched bounds the devices watched at once per processor; a new one
// replaces the one looked at least recently.
const maxWatched = 16

// watchFor is how long a device stays watched after it was last looked at.
const watchFor = 10 * time.Minute

// ReceivedPing is a ping as it arrived, before the reorder buffer: its
// stamp as sent and as judged, and why it was clamped.
type ReceivedPing struct {
	Event  time.Time // on the device's timeline, after clamping
	Stamp  time.Time // as sent (zero when the ping had none)
	Ingest time.Time
	Clamp  clock.ClampReason
	Lat    float64
	Lon    float64
}

type watch struct {
	pings  [watchRing]ReceivedPing
	n      int   // pings recorded, the newest at (n-1) % watchRing
	looked int64 // processor instant of the last look
}

// watchDevice starts keeping d's arrivals, or keeps them longer.
func (p *Processor) watchDevice(d *device, now int64) *watch {
	w := p.watched[d]
	if w == nil {
		if p.watched == nil {
			p.watched = make(map[*device]*watch)
		}
		if len(p.watched) >= maxWatched {
			var oldest *device
			for od, ow := range p.watched {
				if oldest == nil || ow.looked < p.watched[oldest].looked {
					oldest = od
				}
			}
			delete(p.watched, oldest)
		}
		w = new(watch)
		p.watched[d] = w
	}
	w.looked = now
	return w
}

// observe records pg's arrival if its device is watched.
func (p *Processor) observe(d *device, pg *Ping, now int64) {
	w := p.watched[d]
	if w == nil {
		return
	}
	if now-w.looked > int64(watchFor) {
		delete(p.watched, d)
		return
	}
	r := &w.pings[w.n%watchRing]
	*r = ReceivedPing{Event: timeOf(pg.Event), Ingest: pg.Ingest, Clamp: pg.Clamp, Lat: pg.Lat, Lon: pg.Lon}
	if pg.HasStamp {
		r.Stamp = timeOf(pg.Stamp)
	}
	w.n++
}

// received returns w's pings, oldest first.
func (w *watch) received() []ReceivedPing {
	k := min(w.n, watchRing)
	out := make([]ReceivedPing, 0, k)
	for i := w.n - k; i < w.n; i++ {
		out = append(out, w.pings[i%watchRing])
	}
	return out
}
