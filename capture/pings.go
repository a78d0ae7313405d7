package capture

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/edgefence/edgefence/evaluator/engine"
)

// PingWriter writes a simulated stream in the capture format, numbering
// its records. Unlike Writer it never drops: a simulation can wait for
// its disk.
type PingWriter struct {
	mu  sync.Mutex
	f   *os.File
	w   *bufio.Writer
	seq uint64
	buf []byte
	err error
}

// CreatePingWriter creates (or truncates) the capture file at path.
func CreatePingWriter(path string) (*PingWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	return &PingWriter{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// WritePings appends one device's arrivals, in the order given; workers
// call it concurrently. A write error is kept for Close.
func (c *PingWriter) WritePings(arrivals []engine.Ping) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range arrivals {
		c.seq++
		r := FromPing(c.seq, &arrivals[i])
		c.buf = append(AppendJSON(c.buf[:0], &r), '\n')
		if _, err := c.w.Write(c.buf); err != nil && c.err == nil {
			c.err = err
		}
	}
}

// Close flushes and closes the file; it returns the first write error.
func (c *PingWriter) Close() error {
	err := errors.Join(c.err, c.w.Flush(), c.f.Close())
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	return nil
}
