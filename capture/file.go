package capture

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
)

// file is the open capture file.
type file struct {
	f    *os.File
	bw   *bufio.Writer
	size int64 // bytes in the file, including those still buffered
}

// openFile opens path for appending. A file left by a crashed run may end
// in a torn record; a newline then closes it, so that the reader skips
// that one line instead of losing the first record of this run with it.
func openFile(path string) (*file, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("capture: %w", err)
	}
	size := st.Size()
	if size > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, size-1); err != nil {
			f.Close()
			return nil, fmt.Errorf("capture: read the end of %s: %w", path, err)
		}
		if last[0] != '\n' {
			if _, err := f.Write([]byte{'\n'}); err != nil {
				f.Close()
				return nil, fmt.Errorf("capture: terminate the torn last line of %s: %w", path, err)
			}
			size++
		}
	}
	return &file{f: f, bw: bufio.NewWriterSize(f, 64<<10), size: size}, nil
}

func (f *file) write(b []byte) error {
	if _, err := f.bw.Write(b); err != nil {
		return fmt.Errorf("capture: write %s: %w", f.f.Name(), err)
	}
	f.size += int64(len(b))
	return nil
}

// close flushes, syncs and closes: a clean stop or a rotation leaves the
// whole file on disk, not only in the page cache.
func (f *file) close() error {
	err := f.bw.Flush()
	err = errors.Join(err, f.f.Sync(), f.f.Close())
	if err != nil {
		return fmt.Errorf("capture: close %s: %w", f.f.Name(), err)
	}
	return nil
}

// rotate closes the full file, shifts FILE.i to FILE.i+1 (FILE.Keep
// falls off the end), moves FILE to FILE.1 and opens a new FILE.
func (w *Writer) rotate() error {
	err := w.file.close()
	w.file = nil
	if err != nil {
		return err
	}
	if w.o.Keep == 0 {
		if err := os.Remove(w.path); err != nil {
			return fmt.Errorf("capture: rotate: %w", err)
		}
	} else {
		for i := w.o.Keep - 1; i >= 1; i-- {
			err := os.Rename(w.path+"."+strconv.Itoa(i), w.path+"."+strconv.Itoa(i+1))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("capture: rotate: %w", err)
			}
		}
		if err := os.Rename(w.path, w.path+".1"); err != nil {
			return fmt.Errorf("capture: rotate: %w", err)
		}
	}
	f, err := openFile(w.path)
	if err != nil {
		return err
	}
	w.file = f
	return nil
}
