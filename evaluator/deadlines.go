package evaluator

// deadline says that a device's oldest buffered ping has waited its hold at
// instant at (processor-relative nanoseconds).
type deadline struct {
	at  int64
	dev *device
}

// deadlineHeap is a shard's min-heap of hold deadlines. Entries are never
// removed early: one whose device has since rescheduled is skipped when it
// comes up, which is cheaper than tracking heap positions per device.
type deadlineHeap []deadline

func (h *deadlineHeap) push(at int64, d *device) {
	*h = append(*h, deadline{at, d})
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].at <= s[i].at {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *deadlineHeap) pop() deadline {
	s := *h
	n := len(s) - 1
	top := s[0]
	s[0] = s[n]
	s[n] = deadline{}
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].at < s[l].at {
			m = r
		}
		if s[i].at <= s[m].at {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// deadlines is a shard's queue of hold deadlines. With one hold for every
// device, deadlines are pushed in the order pings arrive, which is nearly
// always ascending: those go to a FIFO, O(1) each way and sequential in
// memory. The few that are not (per-device holds, a client goroutine
// preempted between stamping a ping and handing it over) go to a heap. The
// earliest deadline is at the front of one of the two.
type deadlines struct {
	fifo []deadline // ascending; fifo[head:] are pending
	head int
	heap deadlineHeap
}

func (q *deadlines) len() int { return len(q.fifo) - q.head + len(q.heap) }

func (q *deadlines) push(at int64, d *device) {
	if n := len(q.fifo); n > q.head && q.fifo[n-1].at > at {
		q.heap.push(at, d)
		return
	}
	if q.head > 0 && len(q.fifo) == cap(q.fifo) && q.head >= len(q.fifo)/2 {
		// Reuse the consumed half rather than grow.
		n := copy(q.fifo, q.fifo[q.head:])
		clear(q.fifo[n:])
		q.fifo, q.head = q.fifo[:n], 0
	}
	q.fifo = append(q.fifo, deadline{at, d})
}

// next returns the earliest deadline's instant; the queue must not be empty.
func (q *deadlines) next() int64 {
	switch {
	case len(q.heap) == 0:
		return q.fifo[q.head].at
	case q.head == len(q.fifo):
		return q.heap[0].at
	}
	return min(q.fifo[q.head].at, q.heap[0].at)
}

// pop removes the earliest deadline; the queue must not be empty.
func (q *deadlines) pop() deadline {
	if q.head == len(q.fifo) || len(q.heap) > 0 && q.heap[0].at < q.fifo[q.head].at {
		return q.heap.pop()
	}
	e := q.fifo[q.head]
	q.fifo[q.head] = deadline{}
	q.head++
	if q.head == len(q.fifo) {
		q.fifo, q.head = q.fifo[:0], 0
	}
	return e
}

// reset empties the queue, keeping its memory.
func (q *deadlines) reset() {
	clear(q.fifo)
	clear(q.heap)
	q.fifo, q.head, q.heap = q.fifo[:0], 0, q.heap[:0]
}
