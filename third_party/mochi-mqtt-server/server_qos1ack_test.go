// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package mqtt

import (
	"io"
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

// inflightHook records the inflight messages a persisting hook is told of.
type inflightHook struct {
	HookBase
	published, completed []uint16
}

func (h *inflightHook) ID() string { return "inflight" }

func (h *inflightHook) Provides(b byte) bool { return b == OnQosPublish || b == OnQosComplete }

func (h *inflightHook) OnQosPublish(cl *Client, pk packets.Packet, sent int64, resends int) {
	h.published = append(h.published, pk.PacketID)
}

func (h *inflightHook) OnQosComplete(cl *Client, pk packets.Packet) {
	h.completed = append(h.completed, pk.PacketID)
}

// drainedTestClient is a test client whose writes are read and dropped.
func drainedTestClient(t testing.TB) *Client {
	cl, r, w := newTestClient()
	go func() { _, _ = io.Copy(io.Discard, r) }()
	t.Cleanup(func() { _ = w.Close() })
	return cl
}

func TestAcknowledgeQos1PublishTellsInflightHooks(t *testing.T) {
	s := newServer()
	hook := new(inflightHook)
	require.NoError(t, s.AddHook(hook, nil))
	cl := drainedTestClient(t)
	pk := *packets.TPacketData[packets.Publish].Get(packets.TPublishQos1).Packet

	require.NoError(t, s.acknowledgePublish(cl, &pk))
	require.Equal(t, []uint16{pk.PacketID}, hook.published)
	require.Equal(t, []uint16{pk.PacketID}, hook.completed)
	require.Equal(t, 0, cl.State.Inflight.Len())
	require.Equal(t, int64(0), s.Info.Inflight)
}

func BenchmarkAcknowledgeQos1Publish(b *testing.B) {
	s := newServer()
	cl := drainedTestClient(b)
	pk := *packets.TPacketData[packets.Publish].Get(packets.TPublishQos1).Packet
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = s.acknowledgePublish(cl, &pk)
	}
}
