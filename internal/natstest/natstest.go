// Package natstest starts in-process NATS servers for tests from the
// configuration text a deployment's nats.conf holds, so a test's server
// is configured as a real one is (mappings, JetStream, MQTT, clusters).
package natstest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Start writes conf (nats.conf syntax) to name in dir, starts a server
// from it with logging and signal handling off, waits until it accepts
// connections and shuts it down when the test ends (Shutdown may be
// called before). It returns the server and the options the file gave
// (the MQTT port chosen, for one).
func Start(tb testing.TB, dir, name, conf string) (*server.Server, *server.Options) {
	tb.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		tb.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		tb.Fatalf("nats config: %v\n%s", err, conf)
	}
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		tb.Fatal(err)
	}
	s.Start()
	tb.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(20 * time.Second) {
		tb.Fatal("nats: not ready")
	}
	return s, opts
}

// Messages returns every message stream holds at url, in stream order,
// read one sequence at a time (a test's stream is small).
func Messages(tb testing.TB, url, stream string) []*jetstream.RawStreamMsg {
	tb.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		tb.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	var out []*jetstream.RawStreamMsg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue // deleted (a purge or the stream's limits)
		}
		if err != nil {
			tb.Fatalf("%s message %d: %v", stream, seq, err)
		}
		out = append(out, m)
	}
	return out
}

// Leader returns the name of the server that leads stream's replicas,
// "" while it has none, asking within 2 s.
func Leader(js jetstream.JetStream, stream string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return "", err
	}
	info, err := s.Info(ctx)
	if err != nil || info.Cluster == nil {
		return "", err
	}
	return info.Cluster.Leader, nil
}
