// Package presence is a device's state per fence: inside or not, since
// when, whether its DWELL came, and the sequence number that tells a
// reversal. The engine's device record keeps a States; the engine's
// state machine decides the transitions and changes it.
package presence

import (
	"slices"

	"github.com/edgefence/edgefence/evaluator/fence"
)

// State is a device's state in one fence. Outside states linger for one
// ping after an EXIT so that a re-ENTER can be counted as a reversal.
type State struct {
	Fence   string // the fence's ID
	Enter   int64  // event time of the ENTER
	Seq     uint32 // the device's ping count at the last ENTER or EXIT
	Inside  bool
	Dwelled bool
	// Timer is set while a deadline for its DWELL is queued in the
	// engine's DWELL timers (in the record's padding).
	Timer bool
	// Owed is set on a stay left while a late ping stamped before its
	// DWELL's instant waited: the DWELL is decided once the late pings
	// are placed (they may show the device left before it).
	Owed bool
}

// Owed is the DWELL owed to a stay (State.Owed) that another stay in the
// same fence replaced before the late pings were placed: it waits for
// them apart from the state.
type Owed struct {
	Fence     string
	Enter, At int64 // the stay's ENTER and the DWELL's instant
	// Proof says the DWELL is owed only if a ping placed later shows the
	// device inside at or after At, before Until (the stay's EXIT): it
	// came due after the last ping inside known when the device left.
	Proof bool
	Until int64
}

// Owing is the DWELLs owed apart (Owed), by device: rarely any, so no
// device's record grows for them.
type Owing[K comparable] map[K][]Owed

// Add owes o to k, making the map if need be.
func (w *Owing[K]) Add(k K, o Owed) {
	if *w == nil {
		*w = make(Owing[K])
	}
	(*w)[k] = append((*w)[k], o)
}

// Settle drops those owed to k that done reports decided (paid or not
// owed any more), keeping the others in order.
func (w Owing[K]) Settle(k K, done func(Owed) bool) {
	if o, ok := w[k]; ok {
		if o = slices.DeleteFunc(o, done); len(o) > 0 {
			w[k] = o
		} else {
			delete(w, k)
		}
	}
}

// States is a device's states, sorted by fence ID.
type States []State

// Index returns the index of fence id in s, or -1.
func (s States) Index(id string) int {
	for i := range s {
		if s[i].Fence == id {
			return i
		}
	}
	return -1
}

// Insert adds a state keeping s sorted by fence ID.
func (s *States) Insert(st State) {
	i := len(*s)
	*s = append(*s, st)
	for i > 0 && (*s)[i-1].Fence > st.Fence {
		(*s)[i] = (*s)[i-1]
		i--
	}
	(*s)[i] = st
}

// Inside reports whether the device is inside any fence.
func (s States) Inside() bool {
	for i := range s {
		if s[i].Inside {
			return true
		}
	}
	return false
}

// Fences appends to dst the fences of set that the device is inside, in
// s's order (by ID), and returns it; fences no longer in set are left out.
func (s States) Fences(dst []*fence.Fence, set *fence.Set) []*fence.Fence {
	for i := range s {
		if st := &s[i]; st.Inside {
			if f := set.ByID(st.Fence); f != nil {
				dst = append(dst, f)
			}
		}
	}
	return dst
}

// Same reports whether the fences hits (sorted by ID) are exactly those
// the device is inside.
func (s States) Same(hits []*fence.Fence) bool {
	k := 0
	for i := range s {
		if st := &s[i]; st.Inside {
			if k == len(hits) || hits[k].ID != st.Fence {
				return false
			}
			k++
		}
	}
	return k == len(hits)
}

// Prune drops the outside states that did not change at the device's
// ping seq: they matter only to the next ping, for reversal counting.
func (s *States) Prune(seq uint32) {
	k := 0
	for _, st := range *s {
		if st.Inside || st.Seq == seq || st.Owed {
			(*s)[k] = st
			k++
		}
	}
	clear((*s)[k:])
	*s = (*s)[:k]
}

// Compact returns the inside states in a new array without spare
// capacity: a device gone idle drops the outside ones.
func (s States) Compact() States {
	out := make(States, 0, len(s))
	for _, st := range s {
		if st.Inside {
			out = append(out, st)
		}
	}
	return out
}

// Restore sets the state in fence id from a committed transition at
// event: an EXIT drops it; an ENTER or DWELL (dwelled) makes the device
// inside since event, or since its earlier ENTER.
func (s *States) Restore(id string, exit, dwelled bool, event int64) {
	i := s.Index(id)
	if exit {
		if i >= 0 {
			*s = append((*s)[:i], (*s)[i+1:]...)
		}
		return
	}
	st := State{Fence: id, Enter: event, Inside: true, Dwelled: dwelled}
	if i >= 0 {
		st.Enter = min(st.Enter, (*s)[i].Enter)
		st.Dwelled = st.Dwelled || (*s)[i].Dwelled
		(*s)[i] = st
		return
	}
	s.Insert(st)
}

// Due is a DWELL that has come due: the index of its state and its
// event time.
type Due struct {
	I  int
	At int64
}

// SortDues sorts dues by event time.
func SortDues(dues []Due) {
	for i := 1; i < len(dues); i++ { // insertion sort: almost always 0 or 1 entries
		for j := i; j > 0 && dues[j].At < dues[j-1].At; j-- {
			dues[j], dues[j-1] = dues[j-1], dues[j]
		}
	}
}
