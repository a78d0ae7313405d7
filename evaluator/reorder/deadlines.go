package reorder

// Deadline says that the oldest buffered ping of Of (a device) has
// waited its hold at instant At (processor-relative nanoseconds).
type Deadline[T any] struct {
	At int64
	Of T
}

// deadlineHeap is a min-heap of hold deadlines.
type deadlineHeap[T any] []Deadline[T]

func (h *deadlineHeap[T]) push(at int64, of T) {
	*h = append(*h, Deadline[T]{at, of})
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].At <= s[i].At {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *deadlineHeap[T]) pop() Deadline[T] {
	s := *h
	n := len(s) - 1
	top := s[0]
	s[0] = s[n]
	s[n] = Deadline[T]{}
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].At < s[l].At {
			m = r
		}
		if s[i].At <= s[m].At {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return top
}

// Deadlines is a shard's queue of hold deadlines. Entries are never
// removed early: one whose device has since rescheduled is skipped by the
// caller when it comes up, which is cheaper than tracking heap positions
// per device. With one hold for every
// device, deadlines are pushed in the order pings arrive, which is nearly
// always ascending: those go to a FIFO, O(1) each way and sequential in
// memory. The few that are not (per-device holds, a client goroutine
// preempted between stamping a ping and handing it over) go to a heap. The
// earliest deadline is at the front of one of the two.
type Deadlines[T any] struct {
	fifo []Deadline[T] // ascending; fifo[head:] are pending
	head int
	heap deadlineHeap[T]
}

// Len returns how many deadlines are queued.
func (q *Deadlines[T]) Len() int { return len(q.fifo) - q.head + len(q.heap) }

// Push queues a deadline at instant at for of.
func (q *Deadlines[T]) Push(at int64, of T) {
	if n := len(q.fifo); n > q.head && q.fifo[n-1].At > at {
		q.heap.push(at, of)
		return
	}
	if q.head > 0 && len(q.fifo) == cap(q.fifo) && q.head >= len(q.fifo)/2 {
		// Reuse the consumed half rather than grow.
		n := copy(q.fifo, q.fifo[q.head:])
		clear(q.fifo[n:])
		q.fifo, q.head = q.fifo[:n], 0
	}
	q.fifo = append(q.fifo, Deadline[T]{at, of})
}

// Next returns the earliest deadline's instant; the queue must not be empty.
func (q *Deadlines[T]) Next() int64 {
	switch {
	case len(q.heap) == 0:
		return q.fifo[q.head].At
	case q.head == len(q.fifo):
		return q.heap[0].At
	}
	return min(q.fifo[q.head].At, q.heap[0].At)
}

// Pop removes the earliest deadline; the queue must not be empty.
func (q *Deadlines[T]) Pop() Deadline[T] {
	if q.head == len(q.fifo) || len(q.heap) > 0 && q.heap[0].At < q.fifo[q.head].At {
		return q.heap.pop()
	}
	e := q.fifo[q.head]
	q.fifo[q.head] = Deadline[T]{}
	q.head++
	if q.head == len(q.fifo) {
		q.fifo, q.head = q.fifo[:0], 0
	}
	return e
}

// Reset empties the queue, keeping its memory.
func (q *Deadlines[T]) Reset() {
	clear(q.fifo)
	clear(q.heap)
	q.fifo, q.head, q.heap = q.fifo[:0], 0, q.heap[:0]
}
