package ingest

import (
	"hash/maphash"
	"strings"
	"sync"
	"time"
)

// frames remembers each LoRaWAN device's recent frame counters, so that a
// frame delivered twice — heard by two gateways and not deduplicated by
// the network server, published by two integrations, or redelivered by
// the broker — makes one ping. Devices are sharded by id, each shard's
// lock held for a map lookup and a few bit operations.
//
// Memory follows the active devices: each shard keeps two generations of
// maps and drops the older every frameMemory, so a device silent for two
// of them is forgotten (its next frame starts a new window; a copy
// delivered that late is a late ping to the engine, whose history places
// it beside the original).
type frames struct {
	seed   maphash.Seed
	shards [frameShards]frameShard
}

const (
	frameShards = 16
	frameMemory = 10 * time.Minute
)

type frameShard struct {
	mu       sync.Mutex
	cur, old map[string]*window
	rotated  time.Time
}

// window is one device's session and the frame counters seen at and
// below the highest, as a bitmap (bit i: top-i was seen), like an IPsec
// anti-replay window.
type window struct {
	session uint64
	top     uint32
	seen    uint64
}

// windowSize is how far below the highest counter a frame is still
// recognised; further back it is taken as a counter reset (a rebooted
// device, an ABP device without persisted counters) and starts over.
const windowSize = 64

func newFrames() *frames { return &frames{seed: maphash.MakeSeed()} }

func (f *frames) shard(device string) *frameShard {
	return &f.shards[maphash.String(f.seed, device)%frameShards]
}

// sessionKey reduces a session id (devAddr, session_key_id) to a number.
func (f *frames) sessionKey(session []byte) uint64 { return maphash.Bytes(f.seed, session) }

// admit records frame seq of device's session and reports whether it is
// new: false for a counter already seen, which makes no second ping.
func (f *frames) admit(device string, session uint64, seq uint32, now time.Time) bool {
	s := f.shard(device)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil || now.Sub(s.rotated) >= frameMemory {
		s.old, s.cur, s.rotated = s.cur, make(map[string]*window), now
	}
	w := s.cur[device]
	if w == nil {
		if w = s.old[device]; w != nil {
			delete(s.old, device)
		} else {
			w = &window{session: session, top: seq}
		}
		// The id may be a slice of a topic: keep a copy of its own.
		s.cur[strings.Clone(device)] = w
		if w.seen == 0 { // new: nothing to compare with
			w.seen = 1
			return true
		}
	}
	return w.admit(session, seq)
}

// forget undoes admit for a frame the engine refused, so the publisher's
// retry is not taken for a duplicate.
func (f *frames) forget(device string, seq uint32) {
	s := f.shard(device)
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.cur[device]; w != nil && w.top >= seq && w.top-seq < windowSize {
		w.seen &^= 1 << (w.top - seq)
	}
}

func (w *window) admit(session uint64, seq uint32) bool {
	switch {
	case session != w.session:
		*w = window{session: session, top: seq, seen: 1}
	case seq > w.top:
		if d := seq - w.top; d >= windowSize {
			w.seen = 1
		} else {
			w.seen = w.seen<<d | 1
		}
		w.top = seq
	case w.top-seq < windowSize:
		bit := uint64(1) << (w.top - seq)
		if w.seen&bit != 0 {
			return false
		}
		w.seen |= bit
	default:
		*w = window{session: session, top: seq, seen: 1}
	}
	return true
}
