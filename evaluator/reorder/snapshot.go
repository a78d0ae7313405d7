package reorder

// All returns every queued deadline, in no particular order: a
// checkpoint pushes them again to get the same queue back.
func (q *Deadlines[T]) All() []Deadline[T] {
	out := make([]Deadline[T], 0, q.Len())
	out = append(out, q.fifo[q.head:]...)
	return append(out, q.heap...)
}
