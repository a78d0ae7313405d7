package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/worker/cluster"
)

// ConsumeHedged makes one consumer, from the message after the one asked,
// of the subject asked.
func TestConsumeHedgedFromTheNextMessage(t *testing.T) {
	nc, err := nats.Connect(startJetStream(t).ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}}); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if _, err := js.Publish(ctx, fmt.Sprintf("s.%d", i%2), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	it, _, err := cluster.ConsumeHedged(ctx, js, "S", "s.1", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer it.Stop()
	for _, want := range []string{"3", "5"} {
		m, err := it.Next(jetstream.NextMaxWait(5 * time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if string(m.Data()) != want {
			t.Errorf("got %q, want %q", m.Data(), want)
		}
	}
	str, err := js.Stream(ctx, "S")
	if err != nil {
		t.Fatal(err)
	}
	if n := str.CachedInfo().State.Consumers; n != 1 {
		t.Errorf("%d consumers, want 1", n)
	}
}
