// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package mqtt

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/mochi-mqtt/server/v2/packets"
	"github.com/stretchr/testify/require"
)

// inPlaceHook works on packets in place; its by-value methods fail the
// test, since the server must not call them.
type inPlaceHook struct {
	HookBase
	t       testing.TB
	err     error
	bump    bool // OnPacketReadInPlace adds 1 to the packet id
	read    int
	publish int
	encode  int
}

func (h *inPlaceHook) ID() string { return "in-place" }

func (h *inPlaceHook) Provides(b byte) bool {
	return b == OnPacketRead || b == OnPublish || b == OnPacketEncode
}

func (h *inPlaceHook) OnPacketReadInPlace(cl *Client, pk *packets.Packet) error {
	h.read++
	if h.err == nil && h.bump {
		pk.PacketID++
	}
	return h.err
}

func (h *inPlaceHook) OnPublishInPlace(cl *Client, pk *packets.Packet) error {
	h.publish++
	if h.err == nil {
		pk.Payload = append(pk.Payload, '!')
	}
	return h.err
}

func (h *inPlaceHook) OnPacketEncodeInPlace(cl *Client, pk *packets.Packet) {
	h.encode++
	if pk.FixedHeader.Type == packets.Connack {
		pk.Properties.TopicAliasMaximum = 7
	}
}

func (h *inPlaceHook) OnPacketRead(cl *Client, pk packets.Packet) (packets.Packet, error) {
	h.t.Error("OnPacketRead called on a hook that reads in place")
	return pk, nil
}

func (h *inPlaceHook) OnPublish(cl *Client, pk packets.Packet) (packets.Packet, error) {
	h.t.Error("OnPublish called on a hook that works in place")
	return pk, nil
}

func (h *inPlaceHook) OnPacketEncode(cl *Client, pk packets.Packet) packets.Packet {
	h.t.Error("OnPacketEncode called on a hook that encodes in place")
	return pk
}

// copyHook works on copies, as hooks always have.
type copyHook struct {
	HookBase
}

func (h *copyHook) ID() string { return "copy" }

func (h *copyHook) Provides(b byte) bool {
	return b == OnPacketRead || b == OnPublish || b == OnPacketEncode
}

func (h *copyHook) OnPacketRead(cl *Client, pk packets.Packet) (packets.Packet, error) {
	pk.PacketID *= 10
	return pk, nil
}

func (h *copyHook) OnPublish(cl *Client, pk packets.Packet) (packets.Packet, error) {
	pk.Payload = append(pk.Payload, '?')
	return pk, nil
}

func (h *copyHook) OnPacketEncode(cl *Client, pk packets.Packet) packets.Packet {
	pk.Properties.ReceiveMaximum = 9
	return pk
}

func TestHooksInPlaceAndCopiesInOrder(t *testing.T) {
	h := &Hooks{Log: logger}
	ip := &inPlaceHook{t: t, bump: true}
	require.NoError(t, h.Add(ip, nil))
	require.NoError(t, h.Add(new(copyHook), nil))
	cl := new(Client)

	pk := packets.Packet{PacketID: 1, Payload: []byte("a")}
	require.NoError(t, h.onPacketReadInPlace(cl, &pk))
	require.Equal(t, uint16(20), pk.PacketID) // (1+1)*10: in the order added
	require.NoError(t, h.onPublishInPlace(cl, &pk))
	require.Equal(t, "a!?", string(pk.Payload))
	pk.FixedHeader.Type = packets.Connack
	h.onPacketEncodeInPlace(cl, &pk)
	require.Equal(t, uint16(7), pk.Properties.TopicAliasMaximum)
	require.Equal(t, uint16(9), pk.Properties.ReceiveMaximum)
	require.Equal(t, []int{1, 1, 1}, []int{ip.read, ip.publish, ip.encode})
}

func TestHooksInPlaceErrors(t *testing.T) {
	h := &Hooks{Log: logger}
	ip := &inPlaceHook{t: t, bump: true}
	require.NoError(t, h.Add(ip, nil))
	require.NoError(t, h.Add(new(copyHook), nil))
	cl := new(Client)

	// A rejected publish stops the hooks after it and returns the error.
	ip.err = packets.ErrRejectPacket
	pk := packets.Packet{PacketID: 1, Payload: []byte("a")}
	require.ErrorIs(t, h.onPublishInPlace(cl, &pk), packets.ErrRejectPacket)
	require.Equal(t, "a", string(pk.Payload))

	// Any other error from a publish hook is returned too, as OnPublish's.
	ip.err = packets.ErrQuotaExceeded
	require.ErrorIs(t, h.onPublishInPlace(cl, &pk), packets.ErrQuotaExceeded)

	// A read hook's error other than a rejection is ignored, as
	// OnPacketRead ignores it: the next hook still runs.
	ip.err = errors.New("oops")
	require.NoError(t, h.onPacketReadInPlace(cl, &pk))
	require.Equal(t, uint16(10), pk.PacketID)
	ip.err = packets.ErrRejectPacket
	require.ErrorIs(t, h.onPacketReadInPlace(cl, &pk), packets.ErrRejectPacket)
	require.Equal(t, uint16(10), pk.PacketID)
}

// TestServerInPlaceHooksOverTCP has a client publish through hooks that
// work in place: a subscriber receives the payload as the publish hook
// changed it, and the read and encode hooks ran.
func TestServerInPlaceHooksOverTCP(t *testing.T) {
	s := newIdleTestServer(t, &Options{})
	ip := &inPlaceHook{t: t}
	require.NoError(t, s.AddHook(ip, nil))
	s.connect(t, "sub")
	sub := s.conns[0]
	var buf bytes.Buffer
	subscribe := packets.Packet{ProtocolVersion: 4, FixedHeader: packets.FixedHeader{Type: packets.Subscribe, Qos: 1}, PacketID: 1,
		Filters: packets.Subscriptions{{Filter: "a/b", Qos: 0}}}
	require.NoError(t, subscribe.SubscribeEncode(&buf))
	_, err := sub.Write(buf.Bytes())
	require.NoError(t, err)
	_, err = io.ReadFull(sub, make([]byte, 5))
	require.NoError(t, err)

	s.connect(t, "pub")
	buf.Reset()
	encodeAckTestPublish(t, &buf, 0, 0)
	_, err = s.conns[1].Write(buf.Bytes())
	require.NoError(t, err)
	got := make([]byte, 2+2+3+5)
	_, err = io.ReadFull(sub, got)
	require.NoError(t, err)
	require.Equal(t, "ping!", string(got[7:]))
	require.Positive(t, ip.read)
	require.Positive(t, ip.encode)
}
