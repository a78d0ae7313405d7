package broker

import (
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// maxTopics bounds a connection's interned topics: a gateway publishing
// for more devices than this allocates a topic string per ping again.
const maxTopics = 64

// frames is the reader's side of a connection whose pings ingest may
// take: what it read and has neither taken nor handed to mochi, with the
// packets in it delimited from the connection's first byte, so that mochi
// is only ever handed whole packets and ingest only ever sees a packet
// from its start. Only the connection's reader touches it.
type frames struct {
	in        taker // nil until mochi admits the client: until then all is mochi's
	cl        *mqtt.Client
	keepalive uint16 // seconds, the client's, as mochi's deadline uses it

	buf  []byte
	r, w int  // buf[r:w] is read and not yet taken or handed on
	pass int  // bytes of the packet at r still to hand to mochi
	lost bool // a malformed length: mochi gets the rest as read, and closes
	took bool // a packet taken since mochi last refreshed the deadline

	topics topics
}

// taker takes what packets it can from a connection's reader.
type taker interface {
	// take handles pk, one whole packet whose fixed header is hdr bytes
	// long, if it can, and reports whether it did. A packet it does not
	// take goes to mochi: it must have changed nothing then.
	take(f *frames, pk []byte, hdr int) bool
}

func newFrames(size int) *frames { return &frames{buf: make([]byte, size)} }

// topic returns b as a string, the same string for the same topic.
func (f *frames) topic(b []byte) string { return f.topics.intern(b) }

// topics interns a connection's topics: a tracker or gateway publishes on
// a few topics again and again, and the engine keeps the device id cut
// from one, so it must not be a view of a read buffer.
type topics map[string]string

// intern returns b as a string, the same string for the same topic; the
// map is made on first use and cleared at maxTopics.
func (t *topics) intern(b []byte) string {
	if s, ok := (*t)[string(b)]; ok {
		return s
	}
	if *t == nil {
		*t = make(topics)
	} else if len(*t) >= maxTopics {
		clear(*t)
	}
	s := string(b)
	(*t)[s] = s
	return s
}

// readFrames is Read for a connection with frames. It takes what pings it
// can and returns the next packet (or the next part of one) that is
// mochi's; it reads the socket only when it holds no whole packet.
func (c *coalescingConn) readFrames(p []byte) (int, error) {
	f := c.frames
	if len(p) == 0 {
		return 0, nil
	}
	for {
		more := f.r == f.w
		if !more && f.pass == 0 && !f.lost {
			size, hdr := frameSize(f.buf[f.r:f.w])
			switch {
			case hdr < 0:
				f.lost = true
			case hdr == 0:
				more = true // the fixed header is not all here yet
			case size <= f.w-f.r:
				if f.in != nil && f.in.take(f, f.buf[f.r:f.r+size], hdr) {
					f.r += size
					f.took = true
					continue
				}
				f.pass = size
			case f.in != nil && size <= len(f.buf) && f.buf[f.r]>>4 == packets.Publish:
				more = true // maybe a ping: read the rest of it
			default:
				f.pass = size
			}
		}
		if !more {
			n := f.w - f.r
			if !f.lost {
				n = min(n, f.pass)
				f.pass -= min(n, len(p))
			}
			n = copy(p, f.buf[f.r:f.r+n])
			f.r += n
			return n, nil
		}
		if f.pass > 0 || f.lost {
			// The rest of mochi's packet, straight from the socket.
			q := p
			if !f.lost {
				q = p[:min(len(p), f.pass)]
			}
			n, err := c.read(q)
			if !f.lost {
				f.pass -= n
			}
			return n, err
		}
		if f.r > 0 {
			f.w = copy(f.buf, f.buf[f.r:f.w])
			f.r = 0
		}
		if f.took {
			// mochi refreshes the keepalive deadline before each packet
			// it reads; it did not see these.
			f.took = false
			var t time.Time
			if ka := f.keepalive; ka > 0 {
				t = time.Now().Add(time.Duration(ka+ka/2) * time.Second)
			}
			_ = c.SetDeadline(t)
		}
		n, err := c.read(f.buf[f.w:])
		f.w += n
		if n == 0 {
			if f.r < f.w {
				// The connection ended inside a packet: hand mochi what
				// there is; it finds the end next.
				f.lost = true
				continue
			}
			return 0, err
		}
	}
}

// frameSize reads the fixed header at the start of b: the whole packet's
// size and the header's. hdr is 0 while b does not hold the whole header,
// and -1 for a malformed remaining length.
func frameSize(b []byte) (size, hdr int) {
	rem, shift := 0, 0
	for i := 1; i <= 4; i++ {
		if i >= len(b) {
			return 0, 0
		}
		rem |= int(b[i]&0x7f) << shift
		if b[i]&0x80 == 0 {
			return 1 + i + rem, 1 + i
		}
		shift += 7
	}
	return 0, -1
}
