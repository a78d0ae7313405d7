package broker

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"github.com/mochi-mqtt/server/v2/packets"
)

func testStore(t *testing.T, path string) *store {
	t.Helper()
	s, err := openStore(path, "geofence", metrics.NewSet(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func storedTopics(t *testing.T, s *store) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := s.scan(retainedPfx, "", func(_ string, m *storage.Message) { out[m.TopicName] = string(m.Payload) })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A retained message on a topic too long for the log is counted and not
// stored, and the writes around it are committed as usual.
func TestStoreSkipsWhatTheLogCannotHold(t *testing.T) {
	s := testStore(t, t.TempDir())
	defer s.close()
	long := strings.Repeat("x", 65534) // a legal MQTT topic; with "RET_", too long a key
	s.retain(nil, &packets.Packet{TopicName: "a/1", Payload: []byte("1")})
	s.retain(nil, &packets.Packet{TopicName: long, Payload: []byte("2")})
	s.wait(s.retain(nil, &packets.Packet{TopicName: "a/3", Payload: []byte("3")}))
	got := storedTopics(t, s)
	if len(got) != 2 || got["a/1"] != "1" || got["a/3"] != "3" || s.errs.Get() != 1 {
		t.Fatalf("stored %d topics, %d errors; want a/1 and a/3, one error", len(got), s.errs.Get())
	}
}

// mochi is given the stored retained messages but the transitions, which
// restore loads into the retained set itself.
func TestStoreGivesMochiAllButTheTransitions(t *testing.T) {
	s := testStore(t, t.TempDir())
	defer s.close()
	for _, topic := range []string{"geofence/f/d", "geofence-other/x", "devices/d/config"} {
		s.retain(nil, &packets.Packet{TopicName: topic, Payload: []byte("x"), FixedHeader: packets.FixedHeader{Type: packets.Publish, Retain: true}})
	}
	s.wait(s.retain(nil, &packets.Packet{TopicName: "geofence/g/d", Payload: []byte("y")}))
	msgs, err := s.StoredRetainedMessages()
	if err != nil {
		t.Fatal(err)
	}
	var mochi, ours []string
	for _, m := range msgs {
		mochi = append(mochi, m.TopicName)
	}
	if err := s.retainedTransitions(func(m *storage.Message) { ours = append(ours, m.TopicName) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(mochi, []string{"devices/d/config", "geofence-other/x"}) || !slices.Equal(ours, []string{"geofence/f/d", "geofence/g/d"}) {
		t.Errorf("mochi is given %v and restore %v; want the transitions for restore only", mochi, ours)
	}
}

// Writes from many goroutines are committed in batches, each topic's
// latest write wins, a deletion deletes, wait returns only once a write is
// committed (a read transaction sees it), and the reopened file has them.
func TestStoreCommitsEveryWriteLatestWins(t *testing.T) {
	path := t.TempDir()
	s := testStore(t, path)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				topic := fmt.Sprintf("geofence/f/dev-%d-%d", g, i%20)
				pk := packets.Packet{TopicName: topic, Payload: fmt.Appendf(nil, "v%d", i), FixedHeader: packets.FixedHeader{Type: packets.Publish, Retain: true}}
				s.retain(nil, &pk)
			}
		})
	}
	wg.Wait()
	s.wait(s.retain(nil, &packets.Packet{TopicName: "geofence/f/dev-0-0"})) // empty: deletes
	got := storedTopics(t, s)
	if len(got) != 8*20-1 {
		t.Fatalf("%d topics stored, want %d", len(got), 8*20-1)
	}
	if _, ok := got["geofence/f/dev-0-0"]; ok {
		t.Fatal("a deleted topic is still stored")
	}
	if v := got["geofence/f/dev-3-7"]; v != "v187" {
		t.Fatalf("geofence/f/dev-3-7 = %q, want the latest write v187", v)
	}
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	s.queue(retainedPfx+"late", []byte("x")) // after close: dropped, counted
	if s.errs.Get() != 1 {
		t.Fatalf("errors = %d, want 1 for the write after close", s.errs.Get())
	}
	again := testStore(t, path)
	defer again.close()
	if n := len(storedTopics(t, again)); n != 8*20-1 {
		t.Fatalf("after reopening: %d topics, want %d", n, 8*20-1)
	}
}
