// SPDX-License-Identifier: MIT
// SPDX-FileCopyrightText: 2026 mochi-mqtt, mochi-co
// SPDX-FileContributor: edgefence

package packets

// storedPacket is a Packet as Packets keeps it. A Packet is 800 bytes,
// most of them its CONNECT parameters and its properties, which a
// retained publish does not have or has few of: stored, the parameters
// are left out and the properties are behind a pointer, nil when empty,
// which halves what a retained message with properties takes. A packet
// with CONNECT parameters is kept whole.
type storedPacket struct {
	whole           *Packet     // the packet, when it has CONNECT parameters; then nothing else is set
	properties      *Properties // nil when the packet has none
	Payload         []byte
	ReasonCodes     []byte
	Filters         Subscriptions
	TopicName       string
	Origin          string
	FixedHeader     FixedHeader
	Created         int64
	Expiry          int64
	Mods            Mods
	PacketID        uint16
	ProtocolVersion byte
	SessionPresent  bool
	ReasonCode      byte
	ReservedBit     byte
	Ignore          bool
}

// set makes sp keep *pk, reusing what sp has where it can: a retained
// topic's message is replaced far more often than a topic is added.
func (sp *storedPacket) set(pk *Packet) {
	if !pk.Connect.isZero() {
		whole := *pk
		*sp = storedPacket{whole: &whole}
		return
	}
	props := sp.properties
	*sp = storedPacket{
		Payload:         pk.Payload,
		ReasonCodes:     pk.ReasonCodes,
		Filters:         pk.Filters,
		TopicName:       pk.TopicName,
		Origin:          pk.Origin,
		FixedHeader:     pk.FixedHeader,
		Created:         pk.Created,
		Expiry:          pk.Expiry,
		Mods:            pk.Mods,
		PacketID:        pk.PacketID,
		ProtocolVersion: pk.ProtocolVersion,
		SessionPresent:  pk.SessionPresent,
		ReasonCode:      pk.ReasonCode,
		ReservedBit:     pk.ReservedBit,
		Ignore:          pk.Ignore,
	}
	if pk.Properties.isZero() {
		return
	}
	if props == nil {
		props = new(Properties)
	}
	*props = pk.Properties
	sp.properties = props
}

// packet returns the packet sp keeps.
func (sp *storedPacket) packet() Packet {
	if sp.whole != nil {
		return *sp.whole
	}
	pk := Packet{
		Payload:         sp.Payload,
		ReasonCodes:     sp.ReasonCodes,
		Filters:         sp.Filters,
		TopicName:       sp.TopicName,
		Origin:          sp.Origin,
		FixedHeader:     sp.FixedHeader,
		Created:         sp.Created,
		Expiry:          sp.Expiry,
		Mods:            sp.Mods,
		PacketID:        sp.PacketID,
		ProtocolVersion: sp.ProtocolVersion,
		SessionPresent:  sp.SessionPresent,
		ReasonCode:      sp.ReasonCode,
		ReservedBit:     sp.ReservedBit,
		Ignore:          sp.Ignore,
	}
	if sp.properties != nil {
		pk.Properties = *sp.properties
	}
	return pk
}

// isZero reports whether c is the zero ConnectParams (a nil slice, not
// an empty one).
func (c *ConnectParams) isZero() bool {
	return c.Password == nil && c.Username == nil && c.ProtocolName == nil && c.WillPayload == nil &&
		c.ClientIdentifier == "" && c.WillTopic == "" && c.Keepalive == 0 &&
		!c.PasswordFlag && !c.UsernameFlag && c.WillQos == 0 && !c.WillFlag && !c.WillRetain && !c.Clean &&
		c.WillProperties.isZero()
}

// isZero reports whether p is the zero Properties (a nil slice, not an
// empty one).
func (p *Properties) isZero() bool {
	return p.CorrelationData == nil && p.SubscriptionIdentifier == nil && p.AuthenticationData == nil && p.User == nil &&
		p.ContentType == "" && p.ResponseTopic == "" && p.AssignedClientID == "" && p.AuthenticationMethod == "" &&
		p.ResponseInfo == "" && p.ServerReference == "" && p.ReasonString == "" &&
		p.MessageExpiryInterval == 0 && p.SessionExpiryInterval == 0 && p.WillDelayInterval == 0 && p.MaximumPacketSize == 0 &&
		p.ServerKeepAlive == 0 && p.ReceiveMaximum == 0 && p.TopicAliasMaximum == 0 && p.TopicAlias == 0 &&
		p.PayloadFormat == 0 && !p.PayloadFormatFlag && !p.SessionExpiryIntervalFlag && !p.ServerKeepAliveFlag &&
		p.RequestProblemInfo == 0 && !p.RequestProblemInfoFlag && p.RequestResponseInfo == 0 && !p.TopicAliasFlag &&
		p.MaximumQos == 0 && !p.MaximumQosFlag && p.RetainAvailable == 0 && !p.RetainAvailableFlag &&
		p.WildcardSubAvailable == 0 && !p.WildcardSubAvailableFlag && p.SubIDAvailable == 0 && !p.SubIDAvailableFlag &&
		p.SharedSubAvailable == 0 && !p.SharedSubAvailableFlag
}
