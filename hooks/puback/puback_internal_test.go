package puback

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
	"go.uber.org/goleak"
	"pgregory.net/rapid"
)

// The writing goroutines end once what they can write is written.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestAckQueueWritesInPublishOrder: whatever order the ping stream answers
// a connection's pings in, and however many the connection may have
// waiting, the PUBACKs are written in the order of their PUBLISHes, each
// once, with its reason code, and none for a ping refused without one;
// and waitIdle returns only once all are written.
func TestAckQueueWritesInPublishOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var mu sync.Mutex
		var written []packets.Packet
		a := NewQueue(func(pks []packets.Packet) error {
			mu.Lock()
			defer mu.Unlock()
			written = append(written, pks...)
			return nil
		}, rapid.IntRange(1, 8).Draw(t, "max"))
		n := rapid.IntRange(0, 40).Draw(t, "pings")
		type ping struct {
			seq  uint64
			id   uint16
			send bool
			code byte
		}
		var open, all []ping
		for i := range n {
			// Answer some of those waiting, in any order, and more until
			// there is room (a PUBACK leaves the queue once written), as
			// the stream does while the reader waits in add.
			for a.queued() >= a.max || len(open) > 0 && rapid.Bool().Draw(t, "answer now") {
				if len(open) == 0 {
					a.WaitIdle() // all answered: room once written
					continue
				}
				k := rapid.IntRange(0, len(open)-1).Draw(t, "which")
				p := open[k]
				open = slices.Delete(open, k, k+1)
				a.Answer(p.seq, p.send, p.code)
			}
			p := ping{id: uint16(i + 1), send: rapid.IntRange(0, 3).Draw(t, "refused") != 0}
			if p.send && rapid.Bool().Draw(t, "0x97") {
				p.code = packets.ErrQuotaExceeded.Code
			}
			p.seq = a.Add(p.id)
			open, all = append(open, p), append(all, p)
		}
		for _, k := range rapid.Permutation(open).Draw(t, "last answers") {
			a.Answer(k.seq, k.send, k.code)
		}
		a.WaitIdle()
		var want []packets.Packet
		for _, p := range all {
			if p.send {
				want = append(want, packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: p.id, ReasonCode: p.code})
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if len(written) != len(want) {
			t.Fatalf("%d PUBACKs written, want %d", len(written), len(want))
		}
		for i := range want {
			if written[i].PacketID != want[i].PacketID || written[i].ReasonCode != want[i].ReasonCode {
				t.Fatalf("PUBACK %d: id %d code %#x, want id %d code %#x", i, written[i].PacketID, written[i].ReasonCode, want[i].PacketID, want[i].ReasonCode)
			}
		}
	})
}

// queued is the number of PUBACKs not yet written.
func (a *Queue) queued() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.q)
}

// TestAckQueueReleasesItsReaderWhenClosed: a reader waiting for room, or
// for the queue to drain, is let go when its connection closes, though
// the ping stream has not answered.
func TestAckQueueReleasesItsReaderWhenClosed(t *testing.T) {
	a := NewQueue(func([]packets.Packet) error { return nil }, 1)
	a.Add(1)
	done := make(chan struct{})
	go func() {
		a.Add(2) // no room: waits
		a.WaitIdle()
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("Add returned with the queue full and open")
	case <-time.After(50 * time.Millisecond): // waiting, or about to
	}
	a.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the reader still waits 5 s after its connection closed")
	}
}
