package dashboard

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/edgefence/edgefence/evaluator/fence"
)

// Bounds of what the hub keeps and sends.
const (
	// recentMax transitions are kept for a page that opens, and for the
	// introspection panel's "last transitions".
	recentMax = 512
	// viewerQueue events wait for a slow page; beyond it the page is cut
	// off, and its EventSource reconnects to a fresh snapshot.
	viewerQueue = 1024
	// eventWriteTimeout is how long one write to a page's event stream
	// may take before the page is cut off.
	eventWriteTimeout = 30 * time.Second
	// mapDevices is how many devices (the most recently heard) a page is
	// sent each tick: a map of more is unreadable, and the fleet view
	// finds the rest.
	mapDevices = 2000
	// countedMax devices have their late pings counted per window.
	countedMax = 10_000
	// lateWindow is the fleet view's window for late rates: two of them,
	// the current and the one before.
	lateWindow = 10 * time.Minute
	// trackSpan and trackPoints bound a device's track: the positions the
	// pages were sent over the last trackSpan, trackPoints at most (the
	// page keeps the same).
	trackSpan   = 10 * time.Minute
	trackPoints = 60
)

// hub fans the broker's transitions, late pings and rejects out to the
// open pages, and counts late pings per device for the fleet view.
type hub struct {
	cfg   *Config
	eng   Engine
	unsub []func()

	mu      sync.Mutex
	viewers map[*viewer]struct{}
	recent  [][]byte // ring of transition payloads, recentMax at most
	next    int      // where the next one goes once the ring is full
	totals  counts
	late    lateCounts
	// tracks are the map devices' last positions, recorded every tick
	// while a page is open, so that a page that opens (or reloads) draws
	// them at once; unseen is when the last page closed.
	tracks map[string][]trackPoint
	unseen time.Time

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// counts are the totals since start, sent to a page when it opens.
type counts struct {
	Transitions int64 `json:"transitions"`
	Historic    int64 `json:"historic"`
	Late        int64 `json:"late"`
	Rejected    int64 `json:"rejected"`
}

// lateCounts counts late pings (on the late topic) and historic
// transitions (late pings reconciled into a history) per device, in two
// windows.
type lateCounts struct {
	cur, prev map[string]int
	since     time.Time
}

func (l *lateCounts) add(device string, now time.Time) {
	if now.Sub(l.since) >= lateWindow {
		l.prev, l.cur, l.since = l.cur, make(map[string]int), now
	}
	if _, ok := l.cur[device]; ok || len(l.cur) < countedMax {
		l.cur[device]++
	}
}

// trackPoint is a position of a device's track: [lat, lon, Unix ms when
// last seen there].
type trackPoint [3]float64

// record adds the devices' positions at now to their tracks, and drops
// the tracks of devices no longer on the map.
func (h *hub) record(devs []mapDevice, now time.Time) {
	ms, oldest := float64(now.UnixMilli()), float64(now.Add(-trackSpan).UnixMilli())
	h.mu.Lock()
	defer h.mu.Unlock()
	old := h.tracks
	h.tracks = make(map[string][]trackPoint, len(devs))
	for _, d := range devs {
		tr := old[d.ID]
		if n := len(tr); n > 0 && tr[n-1][0] == d.Lat && tr[n-1][1] == d.Lon {
			tr[n-1][2] = ms // still there: a parked device's spot stays on its track
		} else {
			tr = append(tr, trackPoint{d.Lat, d.Lon, ms})
		}
		i := 0
		for len(tr)-i > trackPoints || len(tr)-i > 1 && tr[i][2] < oldest {
			i++
		}
		h.tracks[d.ID] = append(tr[:0], tr[i:]...)
	}
}

// tracksJSON is the tracks of two points or more, as an object by
// device; the caller holds mu.
func (h *hub) tracksJSON() []byte {
	out := make(map[string][]trackPoint)
	for id, tr := range h.tracks {
		if len(tr) > 1 {
			out[id] = tr
		}
	}
	b, _ := json.Marshal(out)
	return b
}

// viewer is one open page.
type viewer struct {
	ch   chan []byte
	gone chan struct{} // closed when the hub cuts it off
	// fences is the set the page was last sent (under the hub's mu):
	// it gets one again only when the engine's set changes.
	fences *fence.Set
}

func newHub(cfg *Config, eng Engine, feed Feed) (*hub, error) {
	h := &hub{
		cfg: cfg, eng: eng,
		viewers: map[*viewer]struct{}{},
		late:    lateCounts{cur: map[string]int{}, since: time.Now()},
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	for _, s := range []struct {
		filter string
		fn     func(string, []byte)
	}{
		{cfg.TransitionPrefix + "/#", h.transition},
		{cfg.LateTopic + "/#", h.latePing},
		{cfg.RejectTopic + "/#", h.rejected}, // the bare topic too
	} {
		u, err := feed.Subscribe(s.filter, s.fn)
		if err != nil {
			close(h.done)
			return nil, errors.Join(err, h.close())
		}
		h.unsub = append(h.unsub, u)
	}
	go h.run()
	return h, nil
}

// transition is called for every transition the broker publishes.
func (h *hub) transition(topic string, payload []byte) {
	if len(payload) == 0 {
		return // a removed fence's retained state being cleared
	}
	historic := bytes.Contains(payload, []byte(`"historic":true`))
	h.mu.Lock()
	defer h.mu.Unlock()
	h.totals.Transitions++
	if historic {
		h.totals.Historic++
		h.late.add(lastLevel(topic), time.Now())
	}
	// Kept without a copy: the publisher builds each payload afresh and
	// nothing writes to it once it is published.
	if len(h.recent) < recentMax {
		h.recent = append(h.recent, payload)
	} else {
		h.recent[h.next] = payload
		h.next = (h.next + 1) % recentMax
	}
	h.broadcast("transition", payload)
}

func (h *hub) latePing(topic string, payload []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.totals.Late++
	h.late.add(lastLevel(topic), time.Now())
	h.broadcast("late", payload)
}

func (h *hub) rejected(_ string, payload []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.totals.Rejected++
	h.broadcast("reject", payload)
}

func lastLevel(topic string) string { return topic[strings.LastIndexByte(topic, '/')+1:] }

// broadcast queues an event for every page (formatted only when one is
// open); a page that has fallen viewerQueue events behind is cut off. The
// caller holds mu.
func (h *hub) broadcast(name string, data []byte) {
	if len(h.viewers) == 0 {
		return
	}
	h.queue(event(name, data))
}

// queue is broadcast for a formatted event.
func (h *hub) queue(ev []byte) {
	for v := range h.viewers {
		h.offer(v, ev)
	}
}

// offer queues an event for one page, or cuts the page off if it has
// fallen viewerQueue events behind. The caller holds mu.
func (h *hub) offer(v *viewer, ev []byte) {
	select {
	case v.ch <- ev:
	default:
		delete(h.viewers, v)
		close(v.gone)
	}
}

// event formats one server-sent event; data is one line of JSON.
func event(name string, data []byte) []byte {
	b := make([]byte, 0, len(name)+len(data)+16)
	b = append(b, "event: "...)
	b = append(b, name...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// run sends the devices to the open pages every tick, and the fences
// to a page whose set is not the engine's (it changed since).
func (h *hub) run() {
	defer close(h.done)
	t := time.NewTicker(h.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		now := time.Now()
		h.mu.Lock()
		n := len(h.viewers)
		if n == 0 && h.tracks != nil && now.Sub(h.unseen) > trackSpan {
			h.tracks = nil // stale, and nobody to show them to
		}
		h.mu.Unlock()
		if n == 0 {
			continue
		}
		h.sendFences(h.eng.Fences())
		if devs, err := h.devices(); err == nil {
			h.record(devs, now)
			if b, err := json.Marshal(devs); err == nil {
				h.send(event("devices", b))
			}
		}
	}
}

func (h *hub) send(ev []byte) {
	h.mu.Lock()
	h.queue(ev)
	h.mu.Unlock()
}

// sendFences sends set to the pages that were sent another, formatted
// once.
func (h *hub) sendFences(set *fence.Set) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var ev []byte
	for v := range h.viewers {
		if v.fences == set {
			continue
		}
		if ev == nil {
			ev = event("fences", fencesJSON(set))
		}
		v.fences = set
		h.offer(v, ev)
	}
}

// serveEvents streams events to one page: first the fences, the devices,
// the totals and the recent transitions (one array), then whatever comes.
func (h *hub) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	set := h.eng.Fences()
	v := &viewer{ch: make(chan []byte, viewerQueue), gone: make(chan struct{}), fences: set}
	first := [][]byte{event("fences", fencesJSON(set))}
	if devs, err := h.devicesJSON(); err == nil {
		first = append(first, event("devices", devs))
	}
	h.mu.Lock()
	select {
	case <-h.stop:
		h.mu.Unlock()
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	default:
	}
	// Before the devices, which draw them.
	first = slices.Insert(first, 1, event("tracks", h.tracksJSON()))
	tot, _ := json.Marshal(h.totals)
	first = append(first, event("totals", tot))
	recent := []byte{'['}
	for i := range h.recent {
		if i > 0 {
			recent = append(recent, ',')
		}
		recent = append(recent, h.recent[(h.next+i)%len(h.recent)]...)
	}
	first = append(first, event("recent", append(recent, ']')))
	h.viewers[v] = struct{}{}
	h.mu.Unlock()
	defer h.leave(v)

	// The server's WriteTimeout bounds a whole answer; a stream extends
	// it per write, so a stalled page is cut off and a live one is not.
	extend := func() { _ = rc.SetWriteDeadline(time.Now().Add(eventWriteTimeout)) }
	extend()
	for _, ev := range first {
		if _, err := w.Write(ev); err != nil {
			return
		}
	}
	// A comment now and then: proxies and the browser keep the stream.
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case ev := <-v.ch:
			extend()
			if _, err := w.Write(ev); err != nil {
				return
			}
			for more := true; more; { // what else is queued, in one flush
				select {
				case ev := <-v.ch:
					if _, err := w.Write(ev); err != nil {
						return
					}
				default:
					more = false
				}
			}
		case <-keep.C:
			extend()
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
				return
			}
		case <-v.gone:
			return
		case <-r.Context().Done():
			return
		}
	}
}

func (h *hub) leave(v *viewer) {
	h.mu.Lock()
	if _, ok := h.viewers[v]; ok {
		delete(h.viewers, v)
		close(v.gone)
	}
	if len(h.viewers) == 0 {
		h.unseen = time.Now()
	}
	h.mu.Unlock()
}

// recentOf returns the recent transitions of device, oldest first.
func (h *hub) recentOf(device string) []json.RawMessage {
	key := []byte(`"device":` + quote(device) + `,`)
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []json.RawMessage
	for i := range h.recent {
		p := h.recent[(h.next+i)%len(h.recent)]
		if bytes.HasPrefix(p[1:], key) {
			out = append(out, json.RawMessage(p))
		}
	}
	return out
}

// lateOf returns device's late pings and historic transitions over the
// last one to two windows, and the window's length.
func (h *hub) lateOf(device string) (int, time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.late.cur[device] + h.late.prev[device], h.lateSpan()
}

// lateSpan is how long the counts cover; the caller holds mu.
func (h *hub) lateSpan() time.Duration {
	span := time.Since(h.late.since)
	if h.late.prev != nil {
		span += lateWindow
	}
	return max(span, time.Second)
}

// close unsubscribes and ends every page's stream.
func (h *hub) close() error {
	h.once.Do(func() {
		for _, u := range h.unsub {
			u()
		}
		h.mu.Lock()
		close(h.stop)
		for v := range h.viewers {
			delete(h.viewers, v)
			close(v.gone)
		}
		h.mu.Unlock()
	})
	<-h.done
	return nil
}
