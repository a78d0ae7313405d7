// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package mqtt

import (
	"bytes"
	"io"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

// passPublishHook lets every publish through as it is.
type passPublishHook struct {
	HookBase
}

func (h *passPublishHook) ID() string { return "pass-publish" }

func (h *passPublishHook) Provides(b byte) bool { return b == OnPublish }

func (h *passPublishHook) OnPublish(cl *Client, pk packets.Packet) (packets.Packet, error) {
	return pk, nil
}

// BenchmarkServerReaderStack connects 200 MQTT 3.1.1 clients over pipes,
// has each publish one QoS 1 message to a topic one of them subscribes to
// (through an OnPublish hook, and routed to the subscriber), and reports
// how much the goroutine stacks grew per publishing client: the readers'
// stacks grow by doubling when a publish goes deeper than they are.
func BenchmarkServerReaderStack(b *testing.B) {
	const clients = 200
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := New(&Options{Logger: logger})
		require.NoError(b, s.AddHook(new(AllowHook), nil))
		require.NoError(b, s.AddHook(new(passPublishHook), nil))
		conns := make([]net.Conn, clients)
		for j := range conns {
			r, w := net.Pipe()
			go func() { _ = s.EstablishConnection("tcp", r) }()
			conns[j] = w
			_ = w.SetDeadline(time.Now().Add(10 * time.Second))
			var connect bytes.Buffer
			pk := packets.Packet{ProtocolVersion: 4, FixedHeader: packets.FixedHeader{Type: packets.Connect},
				Connect: packets.ConnectParams{ProtocolName: []byte("MQTT"), Clean: true, Keepalive: 60, ClientIdentifier: "stack-" + strconv.Itoa(j)}}
			require.NoError(b, pk.ConnectEncode(&connect))
			_, err := w.Write(connect.Bytes())
			require.NoError(b, err)
			_, err = io.ReadFull(w, make([]byte, 4))
			require.NoError(b, err)
		}
		sub := packets.Packet{ProtocolVersion: 4, FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}, PacketID: 1,
			Filters: packets.Subscriptions{{Filter: "a/b", Qos: 0}}}
		var subscribe bytes.Buffer
		require.NoError(b, sub.SubscribeEncode(&subscribe))
		_, err := conns[0].Write(subscribe.Bytes())
		require.NoError(b, err)
		_, err = io.ReadFull(conns[0], make([]byte, 5))
		require.NoError(b, err)
		go func() { _, _ = io.Copy(io.Discard, conns[0]) }() // the subscriber reads what it is sent

		var before, after runtime.MemStats
		runtime.GC() // stacks shrink to what the idle goroutines use
		runtime.ReadMemStats(&before)
		b.StartTimer()
		for _, w := range conns[1:] {
			var publish bytes.Buffer
			encodeAckTestPublish(b, &publish, 1, 1)
			_, err := w.Write(publish.Bytes())
			require.NoError(b, err)
			_, err = io.ReadFull(w, make([]byte, 4))
			require.NoError(b, err)
		}
		b.StopTimer()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(int64(after.StackInuse)-int64(before.StackInuse))/float64(clients-1), "stack-B/publisher")
		for _, w := range conns {
			_ = w.Close()
		}
		_ = s.Close()
		b.StartTimer()
	}
}
