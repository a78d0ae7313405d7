// Package progress draws the status line of long work on a terminal:
// done of total, a bar, the rate and the time left, redrawn in place.
// It draws only where a person watches: Terminal tells a terminal from a
// pipe or a file, so that logs and captured output stay clean.
package progress

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// Options describe what a Line counts.
type Options struct {
	Label string // what is running, first on the line ("simulate")
	Unit  string // what is counted ("devices", "pings")
	Total int64  // the count when done; 0: unknown (no bar, no ETA)
	// Span, when not 0, makes the work timed: done/total and the ETA are
	// elapsed time against Span, and the count only gives the rate (a
	// load run that lasts its warm-up, window and drain).
	Span  time.Duration
	Width int              // the terminal's columns (Width); 0: no limit
	Now   func() time.Time // the clock; nil: time.Now
}

// Line is one status line. Its counters may be updated from any
// goroutine; drawing is serialised. A Line with a nil writer counts but
// never draws, so callers need no conditionals.
type Line struct {
	o     Options
	w     io.Writer
	done  atomic.Int64
	poll  atomic.Pointer[func() int64]
	mu    sync.Mutex // drawing, label, start, total
	start time.Time
	drawn bool
	stop  chan struct{}
	exit  chan struct{}
}

// New returns a Line drawing to w (nil: nowhere), its clock started.
func New(w io.Writer, o Options) *Line {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Line{o: o, w: w, start: o.Now()}
}

// Terminal reports whether f is a terminal: a status line redrawn with
// carriage returns is for a person, not for a pipe or a file.
func Terminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Stderr returns os.Stderr when it is a terminal and quiet is false, or
// nil: the writer a command's Line draws to (--json makes it quiet).
func Stderr(quiet bool) io.Writer {
	if quiet || !Terminal(os.Stderr) {
		return nil
	}
	return os.Stderr
}

// Width is the terminal's width in columns, or 80 when f is not a
// terminal or does not say.
func Width(f *os.File) int {
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
		return w
	}
	return 80
}

// Active reports whether the line draws anywhere.
func (l *Line) Active() bool { return l != nil && l.w != nil }

// Add counts n more done.
func (l *Line) Add(n int64) { l.done.Add(n) }

// Set sets the count done.
func (l *Line) Set(n int64) { l.done.Store(n) }

// Track makes the line read its count from f (an atomic counter's Load)
// at each draw instead of from Add and Set.
func (l *Line) Track(f func() int64) { l.poll.Store(&f) }

// Restart begins a new stage: its label, total, span and count, with the
// clock of the rate and the ETA started again.
func (l *Line) Restart(label, unit string, total int64, span time.Duration) {
	l.mu.Lock()
	l.o.Label, l.o.Unit, l.o.Total, l.o.Span = label, unit, total, span
	l.start = l.o.Now()
	l.done.Store(0)
	l.mu.Unlock()
}

func (l *Line) count() int64 {
	if f := l.poll.Load(); f != nil {
		return (*f)()
	}
	return l.done.Load()
}

// String is the status line now, e.g.
// "simulate [######----------]  1,234/3,000 devices  41.1 devices/s  ETA 43s".
func (l *Line) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.render()
}

func (l *Line) render() string {
	o := &l.o
	elapsed := o.Now().Sub(l.start)
	n := l.count()
	var b strings.Builder
	b.WriteString(o.Label)
	frac, eta := -1.0, time.Duration(-1)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(n) / elapsed.Seconds()
	}
	var doneTotal string
	switch {
	case o.Span > 0:
		frac = min(float64(elapsed)/float64(o.Span), 1)
		eta = max(o.Span-elapsed, 0)
		doneTotal = fmt.Sprintf("%s/%s  %s %s", clock(elapsed), clock(o.Span), count(n), o.Unit)
	case o.Total > 0:
		frac = min(float64(n)/float64(o.Total), 1)
		if rate > 0 {
			eta = time.Duration(float64(max(o.Total-n, 0)) / rate * float64(time.Second))
		}
		doneTotal = count(n) + "/" + count(o.Total) + " " + o.Unit
	default:
		doneTotal = count(n) + " " + o.Unit
	}
	if frac >= 0 {
		const cells = 20
		full := int(frac * cells)
		b.WriteString(" [")
		b.WriteString(strings.Repeat("#", full))
		b.WriteString(strings.Repeat("-", cells-full))
		b.WriteString("] ")
		b.WriteString(strconv.Itoa(int(frac * 100)))
		b.WriteString("%")
	}
	b.WriteString("  ")
	b.WriteString(doneTotal)
	b.WriteString("  ")
	b.WriteString(rateString(rate))
	b.WriteString(" " + o.Unit + "/s")
	switch {
	case eta >= 0:
		b.WriteString("  ETA " + clock(eta))
	case o.Total > 0:
		b.WriteString("  ETA -")
	}
	s := b.String()
	if r := []rune(s); o.Width > 0 && len(r) > o.Width-1 { // the last column would wrap on some terminals
		s = string(r[:o.Width-1])
	}
	return s
}

// count formats n with thousands separators: 1,234,567.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func rateString(r float64) string {
	if r < 100 {
		return strconv.FormatFloat(r, 'f', 1, 64)
	}
	return count(int64(r + 0.5))
}

// clock formats a duration to the second ("43s", "2m05s", "1h02m03s").
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm%02ds", s/3600, s/60%60, s%60)
}

// Draw redraws the line in place: a carriage return, the line, and an
// erase to the end of the line for a shorter line than the last.
func (l *Line) Draw() {
	if !l.Active() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "\r%s\x1b[K", l.render())
	l.drawn = true
}

// Clear erases the line, leaving the cursor at its start.
func (l *Line) Clear() {
	if !l.Active() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
}

func (l *Line) clear() {
	if l.drawn {
		io.WriteString(l.w, "\r\x1b[K")
		l.drawn = false
	}
}

// Write prints p (log lines) above the status line: the line is erased,
// p written, and the line drawn again at the next tick. It makes a Line
// the writer of a command's other messages while it runs.
func (l *Line) Write(p []byte) (int, error) {
	if l.w == nil {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	return l.w.Write(p)
}

// Start redraws the line every interval until Stop. It does nothing on
// a Line that does not draw.
func (l *Line) Start(every time.Duration) {
	if !l.Active() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		return
	}
	l.stop, l.exit = make(chan struct{}), make(chan struct{})
	go func(stop, exit chan struct{}) {
		defer close(exit)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			l.Draw()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}(l.stop, l.exit)
}

// Stop ends the redrawing and erases the line, so that what the command
// prints next starts on a clean line. It is safe to call more than once.
func (l *Line) Stop() {
	if !l.Active() {
		return
	}
	l.mu.Lock()
	stop, exit := l.stop, l.exit
	l.stop = nil
	l.mu.Unlock()
	if stop != nil {
		close(stop)
		<-exit
	}
	l.Clear()
}
