package broker_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/internal/natstest"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/edgefence/edgefence/broker"
	"github.com/edgefence/edgefence/loadgen"
	"github.com/edgefence/edgefence/pingstream"
)

// BenchmarkClusterOneConnection measures what waiting for JetStream's
// acknowledgement inside the telemetry hook costs one connection: a
// gateway over loopback TCP sends QoS 1 pings for 10 devices in writes
// of 8 and reads their PUBACKs, to serve with its local engine, and to
// serve --cluster on one NATS server (R1) and on three (R3, all in this
// process). ns/op is wall time per ping: 1e9/ns/op is the connection's
// pings/s (docs/scale-out.md, "serve --cluster").
func BenchmarkClusterOneConnection(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchOneConnection(b, nil) })
	b.Run("cluster=R1", func(b *testing.B) {
		n := startNATSNode(b)
		benchOneConnection(b, &pingstream.Options{NATS: n.url(), Partitions: 16, Replicas: 1, PingsMaxAge: time.Hour})
	})
	b.Run("cluster=R3", func(b *testing.B) {
		benchOneConnection(b, &pingstream.Options{NATS: clientURLs(startNATS3(b)), Partitions: 16, Replicas: 3, PingsMaxAge: time.Hour})
	})
}

func benchOneConnection(b *testing.B, cluster *pingstream.Options) {
	const devices, window = 10, 8
	cfg := broker.DefaultConfig()
	cfg.MQTTAddr, cfg.HTTPAddr, cfg.DataDir = "127.0.0.1:0", "", ""
	cfg.Fences = filepath.Join("..", "fences.geojson")
	cfg.CloseTimeout, cfg.PublishRate, cfg.Log = 5*time.Second, 0, testLog()
	cfg.Cluster = cluster
	srv, err := broker.Start(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close(context.Background())
	c, err := net.Dial("tcp", srv.MQTTAddr())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rd := loadgen.NewReader(c, 1024, 1<<16)
	connect, _ := loadgen.AppendConnect(nil, "gateway", 60)
	if _, err := c.Write(connect); err != nil {
		b.Fatal(err)
	}
	if code, err := rd.ReadConnack(); err != nil || code != 0 {
		b.Fatalf("CONNACK %d, %v", code, err)
	}
	base := time.Now().Add(-time.Hour).UnixMilli()
	var buf, pay []byte
	id := uint16(0)
	b.ResetTimer()
	for sent := 0; sent < b.N; sent += window {
		buf = buf[:0]
		n := min(window, b.N-sent)
		for k := range n {
			seq := sent + k
			pay = fmt.Appendf(pay[:0], `{"lat":52.5140,"lon":13.3560,"ts":%d}`, base+int64(seq))
			id = id%65535 + 1
			if buf, err = loadgen.AppendPublish(buf, fmt.Sprintf("devices/bench-%d/telemetry", seq%devices), 1, id, pay); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
		for range n {
			fh, _, err := rd.Next()
			if err != nil || fh.Type != packets.Puback {
				b.Fatalf("want PUBACK: type %d, %v", fh.Type, err)
			}
		}
	}
	b.StopTimer()
}

// startNATS3 starts three NATS servers in this process as one JetStream
// cluster and returns them once a replicated stream can be made.
func startNATS3(tb testing.TB) []*server.Server {
	tb.Helper()
	dir := tb.TempDir()
	ports := make([]int, 3)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	routes := fmt.Sprintf("nats-route://127.0.0.1:%d, nats-route://127.0.0.1:%d, nats-route://127.0.0.1:%d", ports[0], ports[1], ports[2])
	srvs := make([]*server.Server, 3)
	for i := range srvs {
		conf := fmt.Sprintf("server_name: n%d\nlisten: \"127.0.0.1:-1\"\njetstream { store_dir: %q }\ncluster { name: test, listen: \"127.0.0.1:%d\", routes: [%s] }\n",
			i+1, filepath.Join(dir, fmt.Sprint(i)), ports[i], routes)
		srvs[i], _ = natstest.Start(tb, dir, fmt.Sprintf("n%d.conf", i), conf)
	}
	nc, err := nats.Connect(clientURLs(srvs))
	if err != nil {
		tb.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: "READY", Subjects: []string{"ready"}, Replicas: 3})
		cancel()
		if err == nil {
			return srvs
		}
		if time.Now().After(deadline) {
			tb.Fatalf("cluster not ready: %v", err)
		}
	}
}

// clientURLs is the servers' client URLs, comma-separated.
func clientURLs(srvs []*server.Server) string {
	var urls []string
	for _, s := range srvs {
		if s.Running() {
			urls = append(urls, s.ClientURL())
		}
	}
	return strings.Join(urls, ",")
}
