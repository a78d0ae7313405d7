package broker

import (
	"sync"

	mqtt "github.com/mochi-mqtt/server/v2"
)

// maxWaitingRetained bounds the retained messages a client's deliveries
// may hold while they wait for its acknowledgements: 8 MB of pointers. A
// client that subscribes again and again without acknowledging gets no
// more (they are counted as shed), instead of a goroutine and a copy of
// the matches for every SUBSCRIBE.
const maxWaitingRetained = 1 << 20

// waiting is a client's deliveries that wait for acknowledgements, sent
// one after another, in SUBSCRIBE order, by one goroutine.
type waiting struct {
	mu      sync.Mutex
	list    []*delivery
	held    int // messages not yet sent in list
	running bool
}

// busy reports whether cl has deliveries waiting: a new one goes after
// them rather than ahead.
func (h *retainedHook) busy(cl *mqtt.Client) bool {
	v, ok := h.waits.Load(cl)
	if !ok {
		return false
	}
	w := v.(*waiting)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running
}

// wait queues what d has left to send behind cl's waiting deliveries and
// starts their goroutine if none runs.
func (h *retainedHook) wait(d *delivery) {
	v, _ := h.waits.LoadOrStore(d.cl, &waiting{})
	w := v.(*waiting)
	rest := len(d.msgs) - d.next
	w.mu.Lock()
	if w.held+rest > maxWaitingRetained {
		w.mu.Unlock()
		h.failed.Add(rest)
		return
	}
	d.held = rest
	w.list = append(w.list, d)
	w.held += rest
	start := !w.running
	w.running = true
	w.mu.Unlock()
	if !start {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopping() {
		return
	}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		h.drain(w)
	}()
}

// drain sends w's deliveries until none is left.
func (h *retainedHook) drain(w *waiting) {
	for {
		w.mu.Lock()
		if len(w.list) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		d := w.list[0]
		w.mu.Unlock()
		h.deliver(d, true)
		w.mu.Lock()
		w.list[0] = nil
		w.list = w.list[1:]
		w.held -= d.held
		w.mu.Unlock()
	}
}
