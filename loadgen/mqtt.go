// Package loadgen drives an MQTT broker with simulated GPS trackers over
// real TCP and measures what it sustains: pings per second, broker CPU per
// ping, memory, and the end-to-end latency from a ping's send instant to
// the receipt of the geofence transition it causes.
//
// It speaks MQTT 3.1.1 through mochi-mqtt's packet codec
// (github.com/mochi-mqtt/server/v2/packets), the one the broker parses
// with: CONNECT/CONNACK, PUBLISH at QoS 0 and 1, PUBACK,
// SUBSCRIBE/SUBACK, PINGREQ/PINGRESP and DISCONNECT. This file only frames
// packets off a connection and encodes into the caller's buffers.
package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/mochi-mqtt/server/v2/packets"
)

// protocolVersion is MQTT 3.1.1's protocol level.
const protocolVersion = 4

// Errors of the decoder.
var (
	ErrMalformed = errors.New("mqtt: malformed packet")
	ErrTooLarge  = errors.New("mqtt: packet larger than the reader's limit")
)

// Each Append function encodes its packet with mochi's encoder into b's
// spare capacity. The packet is built and encoded in the function itself,
// not handed to a shared helper through a function value: that made the
// 900-byte packets.Packet escape to the heap on every call.

// wrap gives an encoder's error its context.
func wrap(typ byte, err error) error {
	return fmt.Errorf("encode MQTT packet type %d: %w", typ, err)
}

// AppendConnect appends an MQTT 3.1.1 CONNECT with a clean session and no
// credentials or will.
func AppendConnect(b []byte, clientID string, keepalive uint16) ([]byte, error) {
	pk := packets.Packet{
		FixedHeader:     packets.FixedHeader{Type: packets.Connect},
		ProtocolVersion: protocolVersion,
		Connect: packets.ConnectParams{
			ProtocolName:     []byte("MQTT"),
			Clean:            true,
			Keepalive:        keepalive,
			ClientIdentifier: clientID,
		},
	}
	buf := bytes.NewBuffer(b)
	if err := pk.ConnectEncode(buf); err != nil {
		return b, wrap(packets.Connect, err)
	}
	return buf.Bytes(), nil
}

// AppendPublish appends a PUBLISH of payload to topic. id is ignored at
// QoS 0 and must not be 0 at QoS 1.
func AppendPublish(b []byte, topic string, qos byte, id uint16, payload []byte) ([]byte, error) {
	pk := packets.Packet{
		FixedHeader:     packets.FixedHeader{Type: packets.Publish, Qos: qos},
		ProtocolVersion: protocolVersion,
		TopicName:       topic,
		Payload:         payload,
	}
	if qos > 0 {
		pk.PacketID = id
	}
	buf := bytes.NewBuffer(b)
	if err := pk.PublishEncode(buf); err != nil {
		return b, wrap(packets.Publish, err)
	}
	return buf.Bytes(), nil
}

// AppendPuback appends a PUBACK for packet id.
func AppendPuback(b []byte, id uint16) []byte {
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, ProtocolVersion: protocolVersion, PacketID: id}
	buf := bytes.NewBuffer(b)
	_ = pk.PubackEncode(buf) // cannot fail
	return buf.Bytes()
}

// AppendSubscribe appends a SUBSCRIBE to one filter.
func AppendSubscribe(b []byte, id uint16, filter string, qos byte) ([]byte, error) {
	pk := packets.Packet{
		FixedHeader:     packets.FixedHeader{Type: packets.Subscribe, Qos: 1},
		ProtocolVersion: protocolVersion,
		PacketID:        id,
		Filters:         packets.Subscriptions{{Filter: filter, Qos: qos}},
	}
	buf := bytes.NewBuffer(b)
	if err := pk.SubscribeEncode(buf); err != nil {
		return b, wrap(packets.Subscribe, err)
	}
	return buf.Bytes(), nil
}

// AppendPingreq appends a PINGREQ.
func AppendPingreq(b []byte) []byte {
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Pingreq}, ProtocolVersion: protocolVersion}
	buf := bytes.NewBuffer(b)
	_ = pk.PingreqEncode(buf) // cannot fail
	return buf.Bytes()
}

// AppendDisconnect appends a DISCONNECT.
func AppendDisconnect(b []byte) []byte {
	pk := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Disconnect}, ProtocolVersion: protocolVersion}
	buf := bytes.NewBuffer(b)
	_ = pk.DisconnectEncode(buf) // cannot fail
	return buf.Bytes()
}

// Reader reads MQTT packets from a buffered stream. The body a call
// returns is valid until the next call.
type Reader struct {
	r   *bufio.Reader
	buf []byte
	max int
}

// NewReader reads packets of at most max bytes of remaining length.
func NewReader(r io.Reader, size, max int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, size), max: max}
}

// Buffered reports how many bytes can be read without blocking.
func (r *Reader) Buffered() int { return r.r.Buffered() }

// Next returns the next packet's fixed header and its body.
func (r *Reader) Next() (fh packets.FixedHeader, body []byte, err error) {
	b, err := r.r.ReadByte()
	if err != nil {
		return fh, nil, err
	}
	if err := fh.Decode(b); err != nil {
		return fh, nil, malformed(err)
	}
	n, _, err := packets.DecodeLength(r.r)
	switch {
	case err != nil:
		if _, ok := err.(packets.Code); ok {
			return fh, nil, malformed(err)
		}
		return fh, nil, noEOF(err)
	case n > r.max:
		return fh, nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, n)
	}
	fh.Remaining = n
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	body = r.buf[:n]
	if _, err := io.ReadFull(r.r, body); err != nil {
		return fh, nil, noEOF(err)
	}
	return fh, body, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// malformed gives a decoder's error its context.
func malformed(err error) error { return fmt.Errorf("%w: %w", ErrMalformed, err) }

// ParsePublish decodes the body of a PUBLISH. The payload points into
// the reader's buffer.
func ParsePublish(fh packets.FixedHeader, body []byte) (packets.Packet, error) {
	pk := packets.Packet{FixedHeader: fh, ProtocolVersion: protocolVersion}
	if fh.Type != packets.Publish {
		return pk, fmt.Errorf("%w: want PUBLISH, got type %d", ErrMalformed, fh.Type)
	}
	if err := pk.PublishDecode(body); err != nil {
		return pk, malformed(err)
	}
	return pk, nil
}

// ParseID decodes the packet identifier of a PUBACK.
func ParseID(fh packets.FixedHeader, body []byte) (uint16, error) {
	pk := packets.Packet{FixedHeader: fh, ProtocolVersion: protocolVersion}
	if err := pk.PubackDecode(body); err != nil {
		return 0, malformed(err)
	}
	return pk.PacketID, nil
}

// ParseSuback decodes a SUBACK's return codes.
func ParseSuback(fh packets.FixedHeader, body []byte) ([]byte, error) {
	pk := packets.Packet{FixedHeader: fh, ProtocolVersion: protocolVersion}
	if err := pk.SubackDecode(body); err != nil {
		return nil, malformed(err)
	}
	return pk.ReasonCodes, nil
}

// ReadConnack reads a CONNACK and returns its return code.
func (r *Reader) ReadConnack() (byte, error) {
	fh, body, err := r.Next()
	if err != nil {
		return 0, err
	}
	if fh.Type != packets.Connack {
		return 0, fmt.Errorf("%w: want CONNACK, got type %d", ErrMalformed, fh.Type)
	}
	pk := packets.Packet{FixedHeader: fh, ProtocolVersion: protocolVersion}
	if err := pk.ConnackDecode(body); err != nil {
		return 0, malformed(err)
	}
	return pk.ReasonCode, nil
}
