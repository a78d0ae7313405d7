// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package mqtt

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// deadlineConn records the deadlines set on it.
type deadlineConn struct {
	net.Conn
	set []time.Time
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.set = append(c.set, t)
	return nil
}

func TestClientRefreshDeadlineWithinSlack(t *testing.T) {
	cl, _, _ := newTestClient()
	dc := &deadlineConn{Conn: cl.Net.Conn}
	cl.Net.Conn = dc

	before := time.Now()
	for i := 0; i < 100; i++ {
		cl.refreshDeadline(10)
	}
	require.Len(t, dc.set, 1, "one deadline for packets read within the slack")
	require.False(t, dc.set[0].Before(before.Add(15*time.Second)))    // [MQTT-3.1.2-22]
	require.False(t, dc.set[0].After(time.Now().Add(16*time.Second))) // at most the slack later

	// Time passes: once the deadline would be less than one and a half
	// keepalives away, it is set again.
	cl.Net.deadline = time.Now().Add(15*time.Second - time.Millisecond)
	cl.refreshDeadline(10)
	require.Len(t, dc.set, 2)

	// A shorter keepalive moves the deadline sooner at once.
	cl.refreshDeadline(2)
	require.Len(t, dc.set, 3)
	require.False(t, dc.set[2].After(time.Now().Add(4*time.Second)))

	// No keepalive: the deadline is removed, once.
	cl.refreshDeadline(0)
	cl.refreshDeadline(0)
	require.Len(t, dc.set, 4)
	require.True(t, dc.set[3].IsZero())
}

func TestClientRefreshDeadlineReplacesAnUnknownOne(t *testing.T) {
	// A deadline set before the client's first refresh (a listener's
	// handshake timeout, say) is replaced even when no keepalive asks for
	// one.
	cl, _, _ := newTestClient()
	dc := &deadlineConn{Conn: cl.Net.Conn}
	cl.Net.Conn = dc
	cl.refreshDeadline(0)
	require.Len(t, dc.set, 1)
	require.True(t, dc.set[0].IsZero())
}

// BenchmarkClientRefreshDeadline is the deadline refresh the reader does
// before each packet, on a loopback TCP connection.
func BenchmarkClientRefreshDeadline(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			defer c.Close()
			var buf [1]byte
			_, _ = c.Read(buf[:])
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(b, err)
	defer c.Close()
	cl, _, _ := newTestClient()
	cl.Net.Conn = c
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cl.refreshDeadline(60)
	}
}
