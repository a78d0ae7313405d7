package broker

import (
	"io"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/internal/mqtttest"
)

// A tracker taken over gets its DISCONNECT 0x8E even when its own
// goroutine still holds the write lock for a moment, as it does when it
// is preempted between writing the CONNACK the client has read and
// letting go of the lock; before, the takeover then closed the socket
// without a word (TestTrackerTakeover failed so, once, in CI).
func TestTakeoverWaitsBrieflyForTheReadersWrite(t *testing.T) {
	client, server := mqtttest.TCPPair(t)
	tc := newTrackerConn(&trackerListener{}, server)
	tc.v5, tc.ok = true, true
	tc.tell.Store(true)

	tc.wmu.Lock() // the reader, between its write and its unlock
	go func() {
		time.Sleep(takeoverWait / 4)
		tc.wmu.Unlock()
	}()
	tc.takenOver()

	_ = client.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, err := io.ReadAll(client)
	if err != nil {
		t.Fatalf("read until the close: %v", err)
	}
	if len(got) < 3 || got[0] != packets.Disconnect<<4 || got[2] != packets.ErrSessionTakenOver.Code {
		t.Fatalf("got % x before the close, want a DISCONNECT with reason %#x", got, packets.ErrSessionTakenOver.Code)
	}
	if why, _ := tc.ending.Load().(string); why != closedTakenOver {
		t.Errorf("closed for %q, want %q", why, closedTakenOver)
	}
}
