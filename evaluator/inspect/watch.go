package inspect

import "time"

// A device being inspected keeps its last pings as they arrived, with
// why each was clamped, in a ring of its own. The ring lives beside the
// device record, not in it, so a device nobody looks at costs nothing
// more, and the per-ping path pays one length check while no device is
// watched.

// Ring is how many arrivals a watched device keeps.
const Ring = 32

// MaxWatched bounds the devices a Watchlist watches at once; a new one
// replaces the one looked at least recently.
const MaxWatched = 16

// WatchFor is how long a device stays watched after it was last looked at.
const WatchFor = 10 * time.Minute

// Watchlist keeps the arrivals of the devices being inspected, keyed by
// K, at instants in nanoseconds on its owner's clock. Its zero value is
// empty and ready. It is not safe for concurrent use: its owner's.
type Watchlist[K comparable] struct {
	watched map[K]*watch
}

type watch struct {
	pings  [Ring]ReceivedPing
	n      int   // pings recorded, the newest at (n-1) % Ring
	looked int64 // instant of the last look
}

// Len returns how many devices are watched.
func (l *Watchlist[K]) Len() int { return len(l.watched) }

// Look starts keeping k's arrivals at now, or keeps them longer, and
// returns those kept so far, oldest first.
func (l *Watchlist[K]) Look(k K, now int64) []ReceivedPing {
	w := l.watched[k]
	if w == nil {
		if l.watched == nil {
			l.watched = make(map[K]*watch)
		}
		if len(l.watched) >= MaxWatched {
			var oldest K
			var found bool
			for ok, ow := range l.watched {
				if !found || ow.looked < l.watched[oldest].looked {
					oldest, found = ok, true
				}
			}
			delete(l.watched, oldest)
		}
		w = new(watch)
		l.watched[k] = w
	}
	w.looked = now
	n := min(w.n, Ring)
	out := make([]ReceivedPing, 0, n)
	for i := w.n - n; i < w.n; i++ {
		out = append(out, w.pings[i%Ring])
	}
	return out
}

// Arrival returns where to record k's arrival at now, or nil when k is
// not watched (any more: WatchFor after its last look, it is dropped).
func (l *Watchlist[K]) Arrival(k K, now int64) *ReceivedPing {
	w := l.watched[k]
	if w == nil {
		return nil
	}
	if now-w.looked > int64(WatchFor) {
		delete(l.watched, k)
		return nil
	}
	r := &w.pings[w.n%Ring]
	w.n++
	return r
}

// Watched reports whether k's arrivals are kept.
func (l *Watchlist[K]) Watched(k K) bool { return l.watched[k] != nil }

// Forget stops watching k.
func (l *Watchlist[K]) Forget(k K) { delete(l.watched, k) }
