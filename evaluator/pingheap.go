package evaluator

// pingHeap is a device's reorder buffer: a binary min-heap by event time.
// Hand-written rather than container/heap so that pushing a Ping (a value
// type) never boxes it into an interface.
type pingHeap []Ping

func (h *pingHeap) push(p *Ping) {
	*h = append(*h, *p)
	s := *h
	i := len(s) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !s[i].less(&s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

// pop removes the earliest ping into *dst.
func (h *pingHeap) pop(dst *Ping) {
	s := *h
	n := len(s) - 1
	*dst = s[0]
	s[0] = s[n]
	s[n] = Ping{} // drop the device string so an evicted buffer holds nothing
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && s[r].less(&s[l]) {
			m = r
		}
		if !s[m].less(&s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
}
