package replay

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
)

// A phantom EXIT+ENTER pair that the buffer removes is two '-' lines, in
// event order; what only the buffered run has is '+'; equal transitions
// (however many) cancel.
func TestDiff(t *testing.T) {
	at := func(s float64) int64 { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixNano() + int64(s*1e9) }
	tr := func(dev, fence string, typ engine.Type, s float64) engine.Transition {
		return engine.Transition{Device: dev, Fence: fence, Type: typ, Event: at(s)}
	}
	arrival := []engine.Transition{
		tr("truck-1", "depot", engine.Enter, 0),
		tr("truck-1", "depot", engine.Exit, 2),  // the delayed outside ping…
		tr("truck-1", "depot", engine.Enter, 1), // …and the inside ping it overtook
		tr("truck-2", "yard", engine.Enter, 5),
		tr("truck-2", "yard", engine.Enter, 5),
	}
	buffered := []engine.Transition{
		tr("truck-2", "yard", engine.Enter, 5),
		tr("truck-1", "depot", engine.Enter, 0),
		tr("truck-2", "yard", engine.Enter, 5),
		tr("truck-2", "yard", engine.Exit, 7.5),
	}
	var out bytes.Buffer
	WriteDiff(&out, "hold=500ms", "arrival", Diff(arrival, buffered), 2)
	want := "hold=500ms vs arrival: 2 removed, 1 added\n" +
		"- truck-1 depot ENTER 2026-12-01T10:00:01.000Z\n" +
		"- truck-1 depot EXIT 2026-12-01T10:00:02.000Z\n" +
		"… 1 more not shown (--diff-limit 2)\n"
	if out.String() != want {
		t.Errorf("diff:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	WriteDiff(&out, "hold=500ms", "arrival", Diff(buffered, slices.Clone(buffered)), 2)
	if out.String() != "hold=500ms vs arrival: the same transitions\n" {
		t.Errorf("no difference printed as %q", out.String())
	}
	if got := FormatTime(at(1) + 1); got != "2026-12-01T10:00:01.000000001Z" {
		t.Errorf("sub-millisecond event time printed as %s", got)
	}
}
