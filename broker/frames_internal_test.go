package broker

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/loadgen"
)

func TestFrameSize(t *testing.T) {
	for _, tc := range []struct {
		in        []byte
		size, hdr int
	}{
		{[]byte{0xc0, 0}, 2, 2},                              // PINGREQ
		{[]byte{0x32, 5, 1, 2, 3}, 7, 2},                     // whole header, part of the body
		{[]byte{0x30}, 0, 0},                                 // no length yet
		{[]byte{0x30, 0x80}, 0, 0},                           // the length goes on
		{[]byte{0x30, 0x80, 0x01}, 131, 3},                   // 128
		{[]byte{0x30, 0xff, 0xff, 0xff, 0x7f}, 268435460, 5}, // the largest MQTT packet
		{[]byte{0x30, 0xff, 0xff, 0xff}, 0, 0},
		{[]byte{0x30, 0xff, 0xff, 0xff, 0xff}, 0, -1}, // five length bytes: malformed
	} {
		size, hdr := frameSize(tc.in)
		if size != tc.size || hdr != tc.hdr {
			t.Errorf("frameSize(% x) = %d, %d; want %d, %d", tc.in, size, hdr, tc.size, tc.hdr)
		}
	}
}

// takeTopics takes every PUBLISH whose topic starts with "take/", and
// notes how many bytes the reader had handed on when it did.
type takeTopics struct {
	handed *int
	took   [][]byte
	at     []int
}

func (s *takeTopics) take(f *frames, pk []byte, hdr int) bool {
	body := pk[hdr:]
	if pk[0]>>4 != 3 || len(body) < 7 || string(body[2:7]) != "take/" {
		return false
	}
	s.took = append(s.took, bytes.Clone(pk))
	s.at = append(s.at, *s.handed)
	return true
}

// readAll reads c as mochi's reader does, through reads of the sizes
// given in turn, until it fails; handed counts what it got.
func readAll(c io.Reader, sizes []int, handed *int, limit int) ([]byte, error) {
	var out []byte
	buf := make([]byte, 4096)
	for i := 0; i < limit; i++ {
		n, err := c.Read(buf[:sizes[i%len(sizes)]])
		out = append(out, buf[:n]...)
		*handed += n
		if err != nil {
			return out, err
		}
	}
	return out, errors.New("reader did not end")
}

// The reader hands mochi every packet the taker does not take, whole and
// in order, and the taker sees a packet only once every packet before it
// has been handed on: whatever mochi makes of a packet happens before any
// later ping is taken. Random streams of pings (some larger than the
// buffer), other packets and large ones, written in random pieces, read
// through reads of random sizes.
func TestFramesHandMochiWholePacketsInOrder(t *testing.T) {
	forBothSockets(t, func(t *testing.T, pair pairFunc) {
		for seed := uint64(1); seed <= 8; seed++ {
			rng := rand.New(rand.NewPCG(seed, 7))
			c, _, peer := pair(t)
			size := 64 + rng.IntN(1024)
			c.frames = newFrames(size)
			var handed int
			taker := &takeTopics{handed: &handed}
			c.frames.in = taker

			var stream, want []byte
			var wantTook [][]byte
			var wantAt []int
			for i := 0; i < 200; i++ {
				var pk []byte
				ping := false
				switch rng.IntN(5) {
				case 0:
					pk = loadgen.AppendPingreq(nil)
				case 1:
					pk = loadgen.AppendSubscribe(nil, 1, strings.Repeat("s", rng.IntN(3000)), 0) // often larger than the buffer
				case 2:
					pk = loadgen.AppendPublish(nil, "pass/x", 1, 1, make([]byte, rng.IntN(200)))
				default:
					pk = loadgen.AppendPublish(nil, "take/x", 1, uint16(i+1), make([]byte, rng.IntN(size)))
					ping = true
				}
				stream = append(stream, pk...)
				if ping && len(pk) <= size { // a larger one cannot be held whole: mochi's

					wantTook = append(wantTook, pk)
					wantAt = append(wantAt, len(want))
					continue
				}
				want = append(want, pk...)
			}
			wrng := rand.New(rand.NewPCG(seed, 8)) // the writer's own
			go func() {
				for rest := stream; len(rest) > 0; {
					n := min(len(rest), 1+wrng.IntN(700))
					if _, err := peer.Write(rest[:n]); err != nil {
						return
					}
					rest = rest[n:]
					if wrng.IntN(4) == 0 {
						time.Sleep(100 * time.Microsecond)
					}
				}
				peer.(*net.TCPConn).CloseWrite()
			}()
			_ = c.SetReadDeadline(time.Now().Add(connWait))
			sizes := make([]int, 16)
			for i := range sizes {
				sizes[i] = 1 + rng.IntN(1500)
			}
			got, err := readAll(c, sizes, &handed, 100000)
			if !errors.Is(err, io.EOF) {
				t.Fatalf("seed %d: reader ended with %v, want EOF", seed, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("seed %d: handed on %d bytes, want %d (the stream less the pings taken)", seed, len(got), len(want))
			}
			if len(taker.took) != len(wantTook) {
				t.Fatalf("seed %d: took %d pings, want %d", seed, len(taker.took), len(wantTook))
			}
			for i := range wantTook {
				if !bytes.Equal(taker.took[i], wantTook[i]) || taker.at[i] != wantAt[i] {
					t.Fatalf("seed %d: ping %d taken with %d bytes handed on, want %d (or its bytes differ)", seed, i, taker.at[i], wantAt[i])
				}
			}
		}
	})
}

// chunkConn returns its input in pieces of the sizes given, then io.EOF.
type chunkConn struct {
	net.Conn // nil: only Read and deadlines are used
	in       []byte
	sizes    []byte
	i        int
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	n := 1 + int(c.sizes[c.i%len(c.sizes)])
	c.i++
	n = copy(p, c.in[:min(n, len(c.in))])
	c.in = c.in[n:]
	return n, nil
}

func (c *chunkConn) SetDeadline(time.Time) error      { return nil }
func (c *chunkConn) SetReadDeadline(time.Time) error  { return nil }
func (c *chunkConn) SetWriteDeadline(time.Time) error { return nil }
func (c *chunkConn) Close() error                     { return nil }

// takeEven takes every PUBLISH of even size: any rule will do.
type takeEven struct {
	handed *int
	took   [][]byte
	at     []int
}

func (s *takeEven) take(f *frames, pk []byte, hdr int) bool {
	if pk[0]>>4 != 3 || len(pk)%2 != 0 {
		return false
	}
	s.took = append(s.took, bytes.Clone(pk))
	s.at = append(s.at, *s.handed)
	return true
}

// FuzzFrames feeds the reader any bytes, in any pieces: what it hands on
// and what it takes always make up the input, each taken packet is cut
// where the input's own framing puts a packet, and it is taken only once
// everything before it has been handed on.
func FuzzFrames(f *testing.F) {
	f.Add([]byte{0xc0, 0, 0x30, 3, 0, 1, 'a', 0x32, 4, 0, 1, 't', 0}, []byte{0, 3}, uint16(64))
	f.Add([]byte{0x30, 0xff, 0xff, 0xff, 0xff, 1, 2, 3}, []byte{1}, uint16(16))
	f.Add(loadgen.AppendPublish(nil, "t", 0, 0, make([]byte, 300)), []byte{200, 9}, uint16(128))
	f.Fuzz(func(t *testing.T, in, sizes []byte, bufSize uint16) {
		if len(sizes) == 0 {
			sizes = []byte{255}
		}
		c := newCoalescingConn(&chunkConn{in: bytes.Clone(in), sizes: sizes})
		c.frames = newFrames(16 + int(bufSize%2048))
		var handed int
		taker := &takeEven{handed: &handed}
		c.frames.in = taker
		got, err := readAll(c, []int{1, 7, 1024, 3, 64}, &handed, 4*len(in)+16)
		if !errors.Is(err, io.EOF) {
			t.Fatalf("reader ended with %v, want EOF", err)
		}
		// Rebuild the input from what was handed on and what was taken.
		var rebuilt []byte
		prev := 0
		for i, pk := range taker.took {
			rebuilt = append(rebuilt, got[prev:taker.at[i]]...)
			prev = taker.at[i]
			// The input's own framing has a packet at this offset.
			off := len(rebuilt)
			pos := 0
			for pos < off {
				size, hdr := frameSize(in[pos:])
				if hdr <= 0 {
					t.Fatalf("a packet taken at %d, past where the input's framing is lost (%d)", off, pos)
				}
				pos += size
			}
			if pos != off {
				t.Fatalf("a packet taken at %d, inside the input's packet ending at %d", off, pos)
			}
			rebuilt = append(rebuilt, pk...)
		}
		rebuilt = append(rebuilt, got[prev:]...)
		if !bytes.Equal(rebuilt, in) {
			t.Fatalf("handed on and taken make %d bytes (% x), not the input's %d (% x)", len(rebuilt), rebuilt, len(in), in)
		}
	})
}
