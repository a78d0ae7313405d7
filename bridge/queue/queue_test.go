package queue

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The queue starts no goroutine of its own; a test must leave none behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// wait bounds a wait for something that should happen at once.
const wait = 10 * time.Second

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func mustOpen(t *testing.T, dir string) *Queue {
	t.Helper()
	q, err := Open(dir, true, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func transitionEntry(key string, n int) *Entry {
	return &Entry{Key: key, Topic: "geofence/f/" + key, Body: fmt.Appendf(nil, `{"n":%d}`, n), Retain: true, Transition: true}
}

// next with a deadline: nil when nothing is ready.
func tryNext(q *Queue) *Entry {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	return q.Next(ctx)
}

// A device's entries go out one at a time and in order; other devices'
// go out meanwhile, oldest first.
func TestQueueOrdersPerDevice(t *testing.T) {
	q := mustOpen(t, t.TempDir())
	batch := []*Entry{transitionEntry("a", 1), transitionEntry("b", 2), transitionEntry("a", 3), transitionEntry("c", 4)}
	if err := q.Write(batch); err != nil {
		t.Fatal(err)
	}
	q.Add(batch)
	var got []string
	var out []*Entry
	for e := tryNext(q); e != nil; e = tryNext(q) {
		got = append(got, string(e.Body))
		out = append(out, e)
	}
	if want := []string{`{"n":1}`, `{"n":2}`, `{"n":4}`}; !slices.Equal(got, want) {
		t.Fatalf("handed out %q with a's first in flight, want %q", got, want)
	}
	if err := q.Ack(out[0]); err != nil {
		t.Fatal(err)
	}
	if e := tryNext(q); e == nil || string(e.Body) != `{"n":3}` {
		t.Fatalf("after a's first is done: %v, want a's second", e)
	}
	// Released unpublished, an entry is its device's next again.
	q.Release(out[1])
	if e := tryNext(q); e != out[1] {
		t.Fatalf("after release: %v, want b's entry again", e)
	}
	if d, v := q.Lens(); d != 3 || v != 0 {
		t.Errorf("lens %d %d, want 3 durable", d, v)
	}
}

// What a run leaves in the directory is what the next one starts with, in
// order; a half-written entry is dropped, an unreadable one set aside.
func TestQueueSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	q := mustOpen(t, dir)
	var batch []*Entry
	for i := range 12 { // more than 9: file names must sort numerically
		batch = append(batch, transitionEntry(fmt.Sprintf("d%d", i%3), i))
	}
	batch[5].ExpireAt = 1234
	if err := q.Write(batch); err != nil {
		t.Fatal(err)
	}
	q.Add(batch)
	first := tryNext(q)
	if err := q.Ack(first); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name(99)+tmpExt), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name(98)), []byte("no header"), 0o600); err != nil {
		t.Fatal(err)
	}

	q2 := mustOpen(t, dir)
	got := q2.Transitions()
	if len(got) != 11 {
		t.Fatalf("reopened with %d transitions, want 11", len(got))
	}
	for i, e := range got {
		if want := fmt.Sprintf(`{"n":%d}`, i+1); string(e.Body) != want || e.Topic != batch[i+1].Topic || !e.Retain {
			t.Errorf("entry %d: %s on %s, want %s on %s", i, e.Body, e.Topic, want, batch[i+1].Topic)
		}
	}
	if got[4].ExpireAt != 1234 {
		t.Errorf("expiry lost: %d", got[4].ExpireAt)
	}
	if _, err := os.Stat(filepath.Join(dir, name(99)+tmpExt)); !os.IsNotExist(err) {
		t.Errorf("partial write not removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, name(98)+corruptExt)); err != nil {
		t.Errorf("unreadable entry not set aside: %v", err)
	}
	// New entries number on after the old ones.
	more := []*Entry{transitionEntry("d0", 100)}
	if err := q2.Write(more); err != nil {
		t.Fatal(err)
	}
	if more[0].seq <= got[len(got)-1].seq {
		t.Errorf("new entry numbered %d, not after %d", more[0].seq, got[len(got)-1].seq)
	}
}

// SetAside takes an entry out of the queue but keeps its file.
func TestQueueSetAside(t *testing.T) {
	dir := t.TempDir()
	q := mustOpen(t, dir)
	batch := []*Entry{transitionEntry("a", 1)}
	if err := q.Write(batch); err != nil {
		t.Fatal(err)
	}
	q.Add(batch)
	e := tryNext(q)
	if err := q.SetAside(e); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.file + failedExt); err != nil {
		t.Fatal(err)
	}
	if q2 := mustOpen(t, dir); len(q2.Transitions()) != 0 {
		t.Error("a set-aside entry came back")
	}
}

// The breaker's wait ends when an entry leaves.
func TestQueueWaitBelow(t *testing.T) {
	q := mustOpen(t, t.TempDir())
	batch := []*Entry{transitionEntry("a", 1), transitionEntry("b", 2), {Key: "c", Topic: "late/c", Body: []byte("{}")}}
	if err := q.Write(batch[:2]); err != nil {
		t.Fatal(err)
	}
	q.Add(batch)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if q.WaitBelow(ctx, 2) {
		t.Fatal("waitBelow(2) returned with 2 durable entries")
	}
	done := make(chan bool)
	go func() { done <- q.WaitBelow(context.Background(), 2) }()
	if err := q.Ack(tryNext(q)); err != nil {
		t.Fatal(err)
	}
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("waitBelow failed")
		}
	case <-time.After(wait):
		t.Fatal("waitBelow still waiting with 1 durable entry")
	}
	for e := tryNext(q); e != nil; e = tryNext(q) {
		if err := q.Ack(e); err != nil {
			t.Fatal(err)
		}
	}
	if !q.WaitEmpty(context.Background()) {
		t.Fatal("waitEmpty on an empty queue")
	}
}
