package ingest

import (
	"fmt"
	"hash/crc64"
	"hash/maphash"
	"slices"
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
// it beside the original). Generations are the instants given to admit
// divided by frameMemory, not counted from a shard's first use, so that
// whether a device is remembered depends only on when it was last heard:
// a worker's reader, aged on its stream's clock and restored from a
// checkpoint into other shards, decides as the one it replaces.
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
	cur, old map[string]*window // heard in generation gen, in gen-1
	gen      int64
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

// crcTable reduces session ids: the same number in every process, so
// that a restored window knows its session (a seeded hash would not).
var crcTable = crc64.MakeTable(crc64.ECMA)

// sessionKey reduces a session id (devAddr, session_key_id) to a number.
func sessionKey(session []byte) uint64 { return crc64.Checksum(session, crcTable) }

// generation is the frameMemory period now falls in.
func generation(now time.Time) int64 { return now.UnixNano() / int64(frameMemory) }

// rotate starts generation g in s if it is a later one: the current
// map becomes the old one when g follows it, and both go when it does not.
func (s *frameShard) rotate(g int64) {
	if s.cur != nil && g <= s.gen {
		return // a clock stepping back keeps the generation
	}
	var old map[string]*window
	if g == s.gen+1 {
		old = s.cur
	}
	s.old, s.cur, s.gen = old, make(map[string]*window), g
}

// admit records frame seq of device's session and reports whether it is
// new: false for a counter already seen, which makes no second ping.
func (f *frames) admit(device string, session uint64, seq uint32, now time.Time) bool {
	s := f.shard(device)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rotate(generation(now))
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

// FrameWindow is one LoRaWAN device's frame counters as a Reader last
// saw them: what a scale-out worker checkpoints (Reader.Frames) so that
// the partition's next owner drops a frame's copy the old one took
// (Reader.RestoreFrames).
type FrameWindow struct {
	Device  string
	Session uint64 // the session id reduced (CRC-64 of devAddr or session_key_id)
	Top     uint32 // the highest frame counter seen
	Seen    uint64 // bit i: counter Top-i was seen
	Gen     int64  // the frameMemory period the device was last heard in
}

// Frames returns the frame windows a Reader remembers, by device: those
// it would still find at its newest instant.
func (r *Reader) Frames() []FrameWindow {
	f := r.frames
	newest := int64(0)
	for i := range f.shards {
		s := &f.shards[i]
		s.mu.Lock()
		if s.cur != nil {
			newest = max(newest, s.gen)
		}
		s.mu.Unlock()
	}
	var out []FrameWindow
	for i := range f.shards {
		s := &f.shards[i]
		s.mu.Lock()
		for g, m := range [2]map[string]*window{s.cur, s.old} {
			gen := s.gen - int64(g)
			if gen < newest-1 {
				continue // forgotten at the shard's next frame
			}
			for dev, w := range m {
				out = append(out, FrameWindow{Device: dev, Session: w.session, Top: w.top, Seen: w.seen, Gen: gen})
			}
		}
		s.mu.Unlock()
	}
	// Sorted: the same state, the same bytes.
	slices.SortFunc(out, func(a, b FrameWindow) int { return strings.Compare(a.Device, b.Device) })
	return out
}

// RestoreFrames makes a Reader that has read nothing remember the frame
// windows another's Frames returned.
func (r *Reader) RestoreFrames(ws []FrameWindow) error {
	f := r.frames
	newest := int64(0)
	for i := range ws {
		newest = max(newest, ws[i].Gen)
	}
	for i := range ws {
		fw := &ws[i]
		if fw.Gen < newest-1 {
			continue
		}
		s := f.shard(fw.Device)
		s.mu.Lock()
		if s.cur == nil {
			s.cur, s.old, s.gen = make(map[string]*window), make(map[string]*window), newest
		}
		m := s.cur
		if fw.Gen < newest {
			m = s.old
		}
		_, dup := m[fw.Device]
		if !dup {
			m[fw.Device] = &window{session: fw.Session, top: fw.Top, seen: fw.Seen}
		}
		s.mu.Unlock()
		if dup {
			return fmt.Errorf("restore frame windows: device %q twice", fw.Device)
		}
	}
	return nil
}
