// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

// The race detector's instrumentation allocates, so this test runs
// without it.

//go:build !race

package mqtt

import (
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

func TestAcknowledgeQos1PublishAllocatesNothing(t *testing.T) {
	s := newServer()
	cl := drainedTestClient(t)
	pk := *packets.TPacketData[packets.Publish].Get(packets.TPublishQos1).Packet

	allocs := testing.AllocsPerRun(100, func() {
		require.NoError(t, s.acknowledgePublish(cl, &pk))
	})
	require.Zero(t, allocs)
	require.Equal(t, 0, cl.State.Inflight.Len())
	require.Equal(t, int64(0), s.Info.Inflight)
}
