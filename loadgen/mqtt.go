// Package loadgen drives an MQTT broker with simulated GPS trackers over
// real TCP and measures what it sustains: pings per second, broker CPU per
// ping, memory, and the end-to-end latency from a ping's send instant to
// the receipt of the geofence transition it causes.
//
// It speaks just enough MQTT 3.1.1, encoded and decoded by hand, to stay
// cheaper than the broker it measures: CONNECT/CONNACK, PUBLISH at QoS 0
// and 1, PUBACK, SUBSCRIBE/SUBACK, PINGREQ/PINGRESP and DISCONNECT.
package loadgen

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MQTT control packet types (the high nibble of the first byte).
const (
	typeConnect    = 1
	typeConnack    = 2
	typePublish    = 3
	typePuback     = 4
	typeSubscribe  = 8
	typeSuback     = 9
	typePingreq    = 12
	typePingresp   = 13
	typeDisconnect = 14
)

// maxRemaining is the largest remaining length MQTT can encode.
const maxRemaining = 268435455

// Errors of the decoder.
var (
	ErrMalformed = errors.New("mqtt: malformed packet")
	ErrTooLarge  = errors.New("mqtt: packet larger than the reader's limit")
)

// appendLength appends an MQTT variable-length remaining length.
func appendLength(b []byte, n int) []byte {
	for {
		d := byte(n % 128)
		n /= 128
		if n > 0 {
			d |= 0x80
		}
		b = append(b, d)
		if n == 0 {
			return b
		}
	}
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// AppendConnect appends an MQTT 3.1.1 CONNECT with a clean session and no
// credentials or will.
func AppendConnect(b []byte, clientID string, keepalive uint16) []byte {
	rem := 10 + 2 + len(clientID)
	b = append(b, typeConnect<<4)
	b = appendLength(b, rem)
	b = appendString(b, "MQTT")
	b = append(b, 4, 0x02) // protocol level 3.1.1; flags: clean session
	b = binary.BigEndian.AppendUint16(b, keepalive)
	return appendString(b, clientID)
}

// AppendPublish appends a PUBLISH of payload to topic. id is ignored at
// QoS 0.
func AppendPublish(b []byte, topic string, qos byte, id uint16, payload []byte) []byte {
	rem := 2 + len(topic) + len(payload)
	if qos > 0 {
		rem += 2
	}
	b = append(b, typePublish<<4|qos<<1)
	b = appendLength(b, rem)
	b = appendString(b, topic)
	if qos > 0 {
		b = binary.BigEndian.AppendUint16(b, id)
	}
	return append(b, payload...)
}

// AppendPuback appends a PUBACK for packet id.
func AppendPuback(b []byte, id uint16) []byte {
	b = append(b, typePuback<<4, 2)
	return binary.BigEndian.AppendUint16(b, id)
}

// AppendSubscribe appends a SUBSCRIBE to one filter.
func AppendSubscribe(b []byte, id uint16, filter string, qos byte) []byte {
	b = append(b, typeSubscribe<<4|0x02)
	b = appendLength(b, 2+2+len(filter)+1)
	b = binary.BigEndian.AppendUint16(b, id)
	b = appendString(b, filter)
	return append(b, qos)
}

// AppendPingreq appends a PINGREQ.
func AppendPingreq(b []byte) []byte { return append(b, typePingreq<<4, 0) }

// AppendDisconnect appends a DISCONNECT.
func AppendDisconnect(b []byte) []byte { return append(b, typeDisconnect<<4, 0) }

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

// Next returns the next packet's first byte and its body.
func (r *Reader) Next() (hdr byte, body []byte, err error) {
	hdr, err = r.r.ReadByte()
	if err != nil {
		return 0, nil, err
	}
	n, mult := 0, 1
	for i := 0; ; i++ {
		c, err := r.r.ReadByte()
		if err != nil {
			return 0, nil, noEOF(err)
		}
		n += int(c&0x7f) * mult
		if c&0x80 == 0 {
			break
		}
		if i == 3 {
			return 0, nil, ErrMalformed
		}
		mult *= 128
	}
	if n > r.max {
		return 0, nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, n)
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, n)
	}
	body = r.buf[:n]
	if _, err := io.ReadFull(r.r, body); err != nil {
		return 0, nil, noEOF(err)
	}
	return hdr, body, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Publish is a decoded PUBLISH; its slices point into the reader's buffer.
type Publish struct {
	QoS     byte
	Retain  bool
	ID      uint16
	Topic   []byte
	Payload []byte
}

// ParsePublish decodes the body of a PUBLISH whose first byte is hdr.
func ParsePublish(hdr byte, body []byte) (Publish, error) {
	p := Publish{QoS: (hdr >> 1) & 3, Retain: hdr&1 == 1}
	if hdr>>4 != typePublish || p.QoS == 3 || len(body) < 2 {
		return p, ErrMalformed
	}
	tl := int(binary.BigEndian.Uint16(body))
	body = body[2:]
	if len(body) < tl {
		return p, ErrMalformed
	}
	p.Topic, body = body[:tl], body[tl:]
	if p.QoS > 0 {
		if len(body) < 2 {
			return p, ErrMalformed
		}
		p.ID, body = binary.BigEndian.Uint16(body), body[2:]
	}
	p.Payload = body
	return p, nil
}

// ParseID decodes the packet identifier that opens a PUBACK or SUBACK body.
func ParseID(body []byte) (uint16, error) {
	if len(body) < 2 {
		return 0, ErrMalformed
	}
	return binary.BigEndian.Uint16(body), nil
}

// ReadConnack reads a CONNACK and returns its return code.
func (r *Reader) ReadConnack() (byte, error) {
	hdr, body, err := r.Next()
	if err != nil {
		return 0, err
	}
	if hdr>>4 != typeConnack || len(body) != 2 {
		return 0, fmt.Errorf("%w: want CONNACK, got type %d", ErrMalformed, hdr>>4)
	}
	return body[1], nil
}
