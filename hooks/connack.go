package hooks

import (
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Limits tells MQTT 5 clients in the CONNACK the limits mochi enforces
// but does not announce: the largest packet it accepts (a client that
// does not know it sends a larger one and is disconnected) and how many
// topic aliases it takes (absent, a client may use none, and a tracker
// sends its whole topic with every ping).
type Limits struct {
	mqtt.HookBase
	MaxPacketSize     uint32 // 0: no limit, nothing announced
	TopicAliasMaximum uint16 // 0: none announced
}

// ID names the hook.
func (h *Limits) ID() string { return "edgefence-limits" }

// Provides says which hook events the hook handles.
func (h *Limits) Provides(b byte) bool { return b == mqtt.OnPacketEncode }

// OnPacketEncodeInPlace adds the limits to a successful MQTT 5 CONNACK.
func (h *Limits) OnPacketEncodeInPlace(cl *mqtt.Client, pk *packets.Packet) {
	if pk.FixedHeader.Type != packets.Connack || pk.ReasonCode != packets.CodeSuccess.Code || cl.Properties.ProtocolVersion < 5 {
		return
	}
	pk.Properties.MaximumPacketSize = h.MaxPacketSize
	pk.Properties.TopicAliasMaximum = h.TopicAliasMaximum
}

// OnPacketEncode is OnPacketEncodeInPlace on a copy, for mochi's Hook
// interface; mochi calls OnPacketEncodeInPlace, which keeps the packet
// off the writer's stack (mochi patch 0024).
func (h *Limits) OnPacketEncode(cl *mqtt.Client, pk packets.Packet) packets.Packet {
	h.OnPacketEncodeInPlace(cl, &pk)
	return pk
}
