package broker

import (
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/storage"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgefence/edgefence/store"
)

// Messages handed to the publisher from many goroutines at once (shard
// owners) all reach a subscriber, each goroutine's in the order it handed
// them over; with a store, each batch is on disk before it is published.
func TestPublisherKeepsEachSourcesOrder(t *testing.T) {
	for _, disk := range []bool{false, true} {
		t.Run(fmt.Sprintf("store=%v", disk), func(t *testing.T) {
			srv := mqtt.New(&mqtt.Options{InlineClient: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			var st *store.Store
			if disk {
				st = testStore(t, t.TempDir())
				defer st.Close()
			}
			if err := srv.Serve(); err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			var mu sync.Mutex
			got := map[string][]int{}
			var notOnDisk []string
			err := srv.Subscribe("t/#", 1, func(cl *mqtt.Client, sub packets.Subscription, pk packets.Packet) {
				src, seq, _ := strings.Cut(string(pk.Payload), ":")
				n, _ := strconv.Atoi(seq)
				mu.Lock()
				got[src] = append(got[src], n)
				slow := len(got[src])%16 == 0
				if disk && len(got[src])%50 == 0 {
					// What a subscriber sees is on disk: this message, or
					// a later one of its source on the same topic.
					_, onDisk, _ := strings.Cut(storedTopics(t, st)[pk.TopicName], ":")
					if m, _ := strconv.Atoi(onDisk); m < n {
						notOnDisk = append(notOnDisk, fmt.Sprintf("%s %s delivered, %q on disk", pk.TopicName, pk.Payload, onDisk))
					}
				}
				mu.Unlock()
				if slow { // a slow subscriber keeps the token: others queue meanwhile
					time.Sleep(100 * time.Microsecond)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			cfg := DefaultConfig()
			p := newPublisher(srv, st, &cfg, metrics.NewSet(), slog.New(slog.NewTextHandler(io.Discard, nil)))
			const sources, each = 8, 500
			var wg sync.WaitGroup
			for g := range sources {
				wg.Go(func() {
					for i := range each {
						p.queue <- message{topic: fmt.Sprintf("t/%d/%d", g, i%7), payload: fmt.Appendf(nil, "s%d:%d", g, i), retain: true}
					}
				})
			}
			wg.Wait()
			p.close()
			if len(notOnDisk) > 0 {
				t.Fatalf("%d messages delivered before they were on disk, e.g. %s", len(notOnDisk), notOnDisk[0])
			}
			for g := range sources {
				seq := got[fmt.Sprintf("s%d", g)]
				if len(seq) != each {
					t.Fatalf("source %d: %d of %d messages published", g, len(seq), each)
				}
				for i, n := range seq {
					if n != i {
						t.Fatalf("source %d: message %d is #%d: order lost", g, i, n)
					}
				}
			}
			if disk {
				on := storedTopics(t, st)
				if len(on) != sources*7 {
					t.Fatalf("%d retained topics stored, want %d", len(on), sources*7)
				}
				if v := on["t/3/6"]; v != fmt.Sprintf("s3:%d", each-1-(each-1-6)%7) {
					t.Fatalf("t/3/6 stored %q: not the last message published to it", v)
				}
			}
		})
	}
}

func testStore(t *testing.T, dir string) *store.Store {
	t.Helper()
	s, err := store.Open(dir, store.Options{Own: publisherID, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// storedTopics is what s holds: topic → payload.
func storedTopics(t *testing.T, s *store.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	if err := s.Retained("", func(m *storage.Message) { out[m.TopicName] = string(m.Payload) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// Transitions queued faster than the disk commits share commits: a
// commit holds what was queued meanwhile (up to batchMax) and starts at
// most once per commitGap, and every message is stored.
func TestPublisherSharesCommitsUnderLoad(t *testing.T) {
	srv := mqtt.New(&mqtt.Options{InlineClient: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	set := metrics.NewSet()
	st, err := store.Open(t.TempDir(), store.Options{Own: publisherID, Metrics: set, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := srv.Serve(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := DefaultConfig()
	p := newPublisher(srv, st, &cfg, set, slog.New(slog.NewTextHandler(io.Discard, nil)))
	const n = 8192
	for i := range n {
		p.queue <- message{topic: fmt.Sprintf("geofence/zone/dev-%05d", i), payload: []byte("{}"), retain: true}
	}
	p.close()
	commits := set.GetOrCreateCounter(`edgefence_store_commits_total`).Get()
	if w := set.GetOrCreateCounter(`edgefence_store_writes_total`).Get(); w != n {
		t.Fatalf("%d messages written to the store, want %d", w, n)
	}
	// One commit per 512 (the old cap) would be 16; a slow hand-over
	// (the race detector, a busy machine) adds one per commitGap.
	if commits > 8 {
		t.Fatalf("%d messages queued at once took %d commits, want at most 8", n, commits)
	}
	if on := storedTopics(t, st); len(on) != n {
		t.Fatalf("%d retained topics stored, want %d", len(on), n)
	}
}
