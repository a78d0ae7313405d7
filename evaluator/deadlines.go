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
