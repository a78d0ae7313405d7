package replay

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
)

// DiffLine is a transition one run committed and the other did not.
type DiffLine struct {
	Op     byte // '-': only the baseline has it; '+': only the other run
	Device string
	Fence  string
	Type   engine.Type
	Event  int64 // event time, Unix nanoseconds
}

// String is "- truck-1 depot ENTER 2026-12-01T10:00:01.000Z".
func (l *DiffLine) String() string {
	return fmt.Sprintf("%c %s %s %s %s", l.Op, l.Device, l.Fence, l.Type, FormatTime(l.Event))
}

// FormatTime shows milliseconds, or nanoseconds when the stamp has them,
// so that two different event times never print the same.
func FormatTime(ns int64) string {
	t := time.Unix(0, ns).UTC()
	if ns%1e6 == 0 {
		return t.Format("2006-01-02T15:04:05.000Z07:00")
	}
	return t.Format(time.RFC3339Nano)
}

func compareTransitions(a, b *engine.Transition) int {
	return cmp.Or(strings.Compare(a.Device, b.Device), strings.Compare(a.Fence, b.Fence),
		cmp.Compare(a.Event, b.Event), cmp.Compare(a.Type, b.Type))
}

// Diff compares two runs' transitions as multisets keyed by device,
// fence, type and event time: what other removed ('-') from base and
// what it added ('+'), by device, fence and event time. Other fields
// (reversal flags, positions, decision instants) are not compared.
func Diff(base, other []engine.Transition) []DiffLine {
	a, b := slices.Clone(base), slices.Clone(other)
	slices.SortFunc(a, func(x, y engine.Transition) int { return compareTransitions(&x, &y) })
	slices.SortFunc(b, func(x, y engine.Transition) int { return compareTransitions(&x, &y) })
	var out []DiffLine
	line := func(op byte, t *engine.Transition) {
		out = append(out, DiffLine{Op: op, Device: t.Device, Fence: t.Fence, Type: t.Type, Event: t.Event})
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var c int
		switch {
		case i == len(a):
			c = 1
		case j == len(b):
			c = -1
		default:
			c = compareTransitions(&a[i], &b[j])
		}
		switch {
		case c < 0:
			line('-', &a[i])
			i++
		case c > 0:
			line('+', &b[j])
			j++
		default:
			i++
			j++
		}
	}
	return out
}

// countOps returns how many lines remove and how many add.
func countOps(lines []DiffLine) (removed, added int) {
	for i := range lines {
		if lines[i].Op == '-' {
			removed++
		} else {
			added++
		}
	}
	return removed, added
}

// WriteDiff prints one strategy's diff against the baseline: a summary
// line, then at most limit lines.
func WriteDiff(w io.Writer, name, baseline string, lines []DiffLine, limit int) {
	removed, added := countOps(lines)
	if len(lines) == 0 {
		fmt.Fprintf(w, "%s vs %s: the same transitions\n", name, baseline)
		return
	}
	fmt.Fprintf(w, "%s vs %s: %d removed, %d added\n", name, baseline, removed, added)
	for i := range lines[:min(len(lines), max(limit, 0))] {
		fmt.Fprintln(w, lines[i].String())
	}
	if n := len(lines) - max(limit, 0); n > 0 {
		fmt.Fprintf(w, "… %d more not shown (--diff-limit %d)\n", n, limit)
	}
}
