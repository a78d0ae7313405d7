package worker_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/subjects"
)

// readExact reads a whole stream of one server, asking for exactly the
// messages it holds, so that no fetch waits out its expiry.
func readExact(t *testing.T, js jetstream.JetStream, name string) []jetstream.Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := js.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.Msg
	for len(out) < int(info.State.Msgs) {
		b, err := c.Fetch(int(info.State.Msgs)-len(out), jetstream.FetchMaxWait(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := len(out)
		for m := range b.Messages() {
			out = append(out, m)
		}
		if err := b.Error(); err != nil || len(out) == n {
			t.Fatalf("read %s: %d of %d messages: %v", name, len(out), info.State.Msgs, err)
		}
	}
	return out
}

// pingsOf is readPings with readExact.
func pingsOf(t *testing.T, js jetstream.JetStream) []streamMsg {
	t.Helper()
	var out []streamMsg
	for _, m := range readExact(t, js, subjects.PingStream) {
		md, _ := m.Metadata()
		rest := strings.TrimPrefix(m.Subject(), subjects.PingSubjectPrefix)
		part, _ := strconv.Atoi(rest[:strings.IndexByte(rest, '.')])
		out = append(out, streamMsg{md.Sequence.Stream, part, m.Subject(), m.Data(), md.Timestamp.UnixNano()})
	}
	return out
}

// historyOf is readHistory with readExact.
func historyOf(t *testing.T, js jetstream.JetStream) []received {
	t.Helper()
	var out []received
	for _, m := range readExact(t, js, subjects.HistoryStream) {
		out = append(out, received{m.Headers().Get(subjects.HeaderTopic), string(m.Data())})
	}
	return out
}
