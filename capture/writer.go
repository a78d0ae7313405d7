package capture

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Options configure a Writer. Start from DefaultOptions: a zero field
// means zero, not "default".
type Options struct {
	// MaxBytes is the size a file may reach: before a record would take it
	// past that, it is rotated (a record larger than MaxBytes still gets a
	// file of its own).
	MaxBytes int64
	// Keep is how many rotated files are kept: FILE.1 (the newest) up to
	// FILE.Keep. 0 keeps none: a full file is deleted.
	Keep int
	// Queue is how many records may wait for the writer goroutine; when it
	// is full, Write drops the record.
	Queue int
	// Flush is the longest a record waits in the write buffer before it is
	// handed to the operating system: what a crash of the process loses.
	Flush time.Duration
	// Written and Dropped count records; nil: unregistered counters.
	Written, Dropped *metrics.Counter
	// Log receives write errors; nil discards them.
	Log *slog.Logger
}

// Defaults of Options.
const (
	DefaultMaxBytes = 256 << 20
	DefaultKeep     = 4
	DefaultQueue    = 8192
	DefaultFlush    = 100 * time.Millisecond
)

// DefaultOptions returns the defaults.
func DefaultOptions() Options {
	return Options{MaxBytes: DefaultMaxBytes, Keep: DefaultKeep, Queue: DefaultQueue, Flush: DefaultFlush}
}

// ErrOptions is wrapped by every invalid option.
var ErrOptions = errors.New("invalid capture options")

// Validate reports the first option a Writer cannot run with.
func (o *Options) Validate() error {
	switch {
	case o.MaxBytes < 1:
		return fmt.Errorf("%w: max bytes %d must be positive", ErrOptions, o.MaxBytes)
	case o.Keep < 0:
		return fmt.Errorf("%w: keep %d is negative", ErrOptions, o.Keep)
	case o.Queue < 1:
		return fmt.Errorf("%w: queue %d must be at least 1", ErrOptions, o.Queue)
	case o.Flush <= 0:
		return fmt.Errorf("%w: flush interval %v must be positive", ErrOptions, o.Flush)
	}
	return nil
}

// Writer appends records to a capture file from one goroutine. Write is
// safe for concurrent use and never blocks on the disk.
type Writer struct {
	path string
	o    Options

	in     chan Record
	mu     sync.RWMutex // Write holds it shared; Close exclusively, to stop them
	closed bool
	stop   chan struct{}
	done   chan struct{}

	// Owned by the writer goroutine (until done is closed).
	file  *file
	line  []byte
	err   error     // the first write error, returned by Close
	retry time.Time // when a failed file may be opened again
}

// Create opens (or appends to) the capture file at path and starts the
// writer goroutine. The file must be openable now: a capture that cannot
// be written is a startup error, not a silent gap.
func Create(path string, o Options) (*Writer, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	if o.Written == nil {
		o.Written = new(metrics.Counter)
	}
	if o.Dropped == nil {
		o.Dropped = new(metrics.Counter)
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{
		path: path,
		o:    o,
		in:   make(chan Record, o.Queue),
		stop: make(chan struct{}),
		done: make(chan struct{}),
		file: f,
		line: make([]byte, 0, 512),
	}
	go w.run()
	return w, nil
}

// Write queues r without blocking and reports whether it was queued; a
// record that finds the queue full, or the Writer closed, is dropped and
// counted.
func (w *Writer) Write(r *Record) bool {
	w.mu.RLock()
	ok := false
	if !w.closed {
		select {
		case w.in <- *r:
			ok = true
		default:
		}
	}
	w.mu.RUnlock()
	if !ok {
		w.o.Dropped.Inc()
	}
	return ok
}

// Written returns how many records reached the file's buffer.
func (w *Writer) Written() uint64 { return w.o.Written.Get() }

// Dropped returns how many records were dropped.
func (w *Writer) Dropped() uint64 { return w.o.Dropped.Get() }

// Close writes what is queued, flushes and syncs the file, and returns the
// first write error of the Writer's life, if any. Later Writes are dropped.
func (w *Writer) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		<-w.done
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.done
	return w.err
}

func (w *Writer) run() {
	defer close(w.done)
	timer := time.NewTimer(w.o.Flush)
	timer.Stop()
	armed := false // a flush is pending: the buffer holds records
	for {
		select {
		case r := <-w.in:
			w.write(&r)
			if !armed {
				timer.Reset(w.o.Flush)
				armed = true
			}
		case <-timer.C:
			armed = false
			w.flush()
		case <-w.stop:
			timer.Stop()
			for {
				select {
				case r := <-w.in:
					w.write(&r)
					continue
				default:
				}
				break
			}
			if w.file != nil {
				if err := w.file.close(); err != nil && w.err == nil {
					w.err = err
				}
				w.file = nil
			}
			return
		}
	}
}

// write appends one record, rotating first when it would not fit.
func (w *Writer) write(r *Record) {
	if w.file == nil && !w.reopen() {
		w.o.Dropped.Inc()
		return
	}
	w.line = append(AppendJSON(w.line[:0], r), '\n')
	n := int64(len(w.line))
	if w.file.size > 0 && w.file.size+n > w.o.MaxBytes {
		if err := w.rotate(); err != nil {
			w.fail(err)
			w.o.Dropped.Inc()
			return
		}
	}
	if err := w.file.write(w.line); err != nil {
		w.fail(err)
		w.o.Dropped.Inc()
		return
	}
	w.o.Written.Inc()
}

func (w *Writer) flush() {
	if w.file == nil {
		return
	}
	if err := w.file.bw.Flush(); err != nil {
		w.fail(fmt.Errorf("capture: write %s: %w", w.path, err))
	}
}

// fail gives up on the current file after an error (a full disk, say):
// records are dropped and counted until it can be opened again, tried
// once a second, so a transient failure does not end the capture.
func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
	w.o.Log.Error("capture write failed; dropping records until the file can be reopened", "path", w.path, "error", err)
	if w.file != nil {
		_ = w.file.f.Close() // unflushed records are lost with it
		w.file = nil
	}
	w.retry = time.Now().Add(time.Second)
}

func (w *Writer) reopen() bool {
	if time.Now().Before(w.retry) {
		return false
	}
	f, err := openFile(w.path)
	if err != nil {
		w.fail(err)
		return false
	}
	w.file = f
	w.o.Log.Info("capture file reopened", "path", w.path)
	return true
}
