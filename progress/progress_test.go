package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgefence/edgefence/internal/syncbuf"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is the injected clock: time moves only when the test says.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)} }

func TestLineShowsDoneTotalRateAndETA(t *testing.T) {
	c := newClock()
	l := New(&bytes.Buffer{}, Options{Label: "simulate", Unit: "devices", Total: 3000, Now: c.now})
	c.advance(10 * time.Second)
	l.Add(1000)
	l.Add(500)
	// 1,500 in 10 s is 150/s; 1,500 left is 10 s more.
	want := "simulate [##########----------] 50%  1,500/3,000 devices  150 devices/s  ETA 10s"
	if got := l.String(); got != want {
		t.Fatalf("line\n got %q\nwant %q", got, want)
	}
	c.advance(50 * time.Second)
	l.Set(1800) // 30/s: 1,200 left is 40 s
	want = "simulate [############--------] 60%  1,800/3,000 devices  30.0 devices/s  ETA 40s"
	if got := l.String(); got != want {
		t.Fatalf("line\n got %q\nwant %q", got, want)
	}
}

func TestLineBeforeAnyProgressHasNoETA(t *testing.T) {
	c := newClock()
	l := New(nil, Options{Label: "replay", Unit: "devices", Total: 10, Now: c.now})
	want := "replay [--------------------] 0%  0/10 devices  0.0 devices/s  ETA -"
	if got := l.String(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestLineWithoutTotalCountsAndRates(t *testing.T) {
	c := newClock()
	l := New(nil, Options{Label: "replay: reading", Unit: "records", Now: c.now})
	c.advance(2 * time.Second)
	l.Add(2_469_000)
	want := "replay: reading  2,469,000 records  1,234,500 records/s"
	if got := l.String(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestTimedLineCountsTimeAndRatesTheCount(t *testing.T) {
	c := newClock()
	var sent int64
	l := New(nil, Options{Label: "loadgen: measuring", Unit: "pings", Span: 15 * time.Second, Now: c.now})
	l.Track(func() int64 { return sent })
	c.advance(3 * time.Second)
	sent = 36_000
	want := "loadgen: measuring [####----------------] 20%  3s/15s  36,000 pings  12,000 pings/s  ETA 12s"
	if got := l.String(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	c.advance(20 * time.Second) // past its span (a slow drain): full, not beyond
	if got := l.String(); !strings.Contains(got, "[####################] 100%") || !strings.HasSuffix(got, "ETA 0s") {
		t.Fatalf("past the span: %q", got)
	}
}

func TestRestartBeginsANewStage(t *testing.T) {
	c := newClock()
	l := New(nil, Options{Label: "replay: reading", Unit: "records", Now: c.now})
	c.advance(time.Minute)
	l.Add(100)
	l.Restart("replay", "devices", 4, 0)
	c.advance(2 * time.Second)
	l.Add(1)
	want := "replay [#####---------------] 25%  1/4 devices  0.5 devices/s  ETA 6s"
	if got := l.String(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestLongDurationsAndNarrowTerminals(t *testing.T) {
	c := newClock()
	l := New(nil, Options{Label: "simulate", Unit: "devices", Total: 100_000, Width: 40, Now: c.now})
	c.advance(time.Hour)
	l.Add(1)
	got := l.String()
	if n := len([]rune(got)); n != 39 {
		t.Fatalf("a 40-column line is %d runes: %q", n, got)
	}
	if clock(99999*time.Hour+62*time.Second) != "99999h01m02s" || clock(125*time.Second) != "2m05s" {
		t.Fatalf("clock: %s, %s", clock(99999*time.Hour+62*time.Second), clock(125*time.Second))
	}
}

func TestDrawRedrawsInPlaceAndStopErases(t *testing.T) {
	c := newClock()
	var out bytes.Buffer
	l := New(&out, Options{Label: "x", Unit: "u", Total: 2, Now: c.now})
	l.Draw()
	c.advance(time.Second)
	l.Add(1)
	l.Draw()
	if _, err := l.Write([]byte("a log line\n")); err != nil {
		t.Fatal(err)
	}
	l.Stop()
	want := "\rx [--------------------] 0%  0/2 u  0.0 u/s  ETA -\x1b[K" +
		"\rx [##########----------] 50%  1/2 u  1.0 u/s  ETA 1s\x1b[K" +
		"\r\x1b[Ka log line\n"
	if out.String() != want {
		t.Fatalf("output\n got %q\nwant %q", out.String(), want)
	}
}

func TestStartRedrawsUntilStop(t *testing.T) {
	var out syncbuf.Buffer
	l := New(&out, Options{Label: "x", Unit: "u", Total: 2})
	l.Start(time.Millisecond)
	for out.String() == "" { // the first draw is immediate; bounded by the test's timeout
		time.Sleep(time.Millisecond)
	}
	l.Stop()
	l.Stop()
	s := out.String()
	if !strings.HasPrefix(s, "\rx [") || !strings.HasSuffix(s, "\r\x1b[K") {
		t.Fatalf("output %q", s)
	}
}

// A Line without a writer (not a terminal, or --json) writes nothing and
// starts no goroutine (goleak checks).
func TestQuietLineDrawsNothing(t *testing.T) {
	l := New(nil, Options{Label: "x", Total: 2})
	l.Start(time.Millisecond)
	l.Add(1)
	l.Draw()
	l.Stop()
	if l.Active() {
		t.Fatal("a Line without a writer is active")
	}
}

func TestAFileIsNotATerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if Terminal(f) {
		t.Fatal("a file is a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if Terminal(w) {
		t.Fatal("a pipe is a terminal")
	}
	if Width(f) != 80 {
		t.Fatalf("a file's width is %d", Width(f))
	}
}
