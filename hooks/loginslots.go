package hooks

import (
	"slices"
	"sync"
	"time"
)

// verifySlots bounds the password verifications running at once, and
// orders the logins waiting for one: those of users in good standing (see
// loginGate.standing) go ahead of every other, each class in order of
// arrival. A flood of bogus logins then queues behind a cold legitimate
// one instead of before it.
type verifySlots struct {
	mu    sync.Mutex
	free  int
	first []chan struct{} // waiting logins of users in good standing
	rest  []chan struct{} // every other waiting login
}

func newVerifySlots(n int) *verifySlots { return &verifySlots{free: n} }

// acquire takes a slot, waiting at most wait, ahead of the other logins
// when first; it reports whether it got one.
func (s *verifySlots) acquire(wait time.Duration, first bool) bool {
	s.mu.Lock()
	if s.free > 0 && len(s.first) == 0 && len(s.rest) == 0 {
		s.free--
		s.mu.Unlock()
		return true
	}
	ch := make(chan struct{}, 1) // release hands the slot over without waiting
	q := &s.rest
	if first {
		q = &s.first
	}
	*q = append(*q, ch)
	s.mu.Unlock()

	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(*q, ch)
	if i < 0 {
		return true // handed a slot as the wait ended: it is ours
	}
	*q = slices.Delete(*q, i, i+1)
	return false
}

// release gives a slot back, to the first login waiting if any.
func (s *verifySlots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := &s.first
	if len(*q) == 0 {
		q = &s.rest
	}
	if len(*q) == 0 {
		s.free++
		return
	}
	ch := (*q)[0]
	*q = slices.Delete(*q, 0, 1)
	ch <- struct{}{}
}
