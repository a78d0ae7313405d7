package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/edgefence/edgefence/evaluator/engine"
	"github.com/edgefence/edgefence/shadow"
)

// replayDiffLine is a transition one run committed and the other did not.
type replayDiffLine struct {
	op     byte // '-': only the baseline has it; '+': only the other run
	device string
	fence  string
	typ    engine.Type
	event  int64
}

// String is "- truck-1 depot ENTER 2026-12-01T10:00:01.000Z".
func (l *replayDiffLine) String() string {
	return fmt.Sprintf("%c %s %s %s %s", l.op, l.device, l.fence, l.typ, replayTime(l.event))
}

// replayTime shows milliseconds, or nanoseconds when the stamp has them,
// so that two different event times never print the same.
func replayTime(ns int64) string {
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

// replayDiff compares two runs' transitions as multisets keyed by device,
// fence, type and event time: what other removed ('-') from base and
// what it added ('+'), by device, fence and event time. Other fields
// (reversal flags, positions, decision instants) are not compared.
func replayDiff(base, other []engine.Transition) []replayDiffLine {
	a, b := slices.Clone(base), slices.Clone(other)
	slices.SortFunc(a, func(x, y engine.Transition) int { return compareTransitions(&x, &y) })
	slices.SortFunc(b, func(x, y engine.Transition) int { return compareTransitions(&x, &y) })
	var out []replayDiffLine
	line := func(op byte, t *engine.Transition) {
		out = append(out, replayDiffLine{op: op, device: t.Device, fence: t.Fence, typ: t.Type, event: t.Event})
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
func countOps(lines []replayDiffLine) (removed, added int) {
	for i := range lines {
		if lines[i].op == '-' {
			removed++
		} else {
			added++
		}
	}
	return removed, added
}

// writeReplayDiff prints one strategy's diff against the baseline: a
// summary line, then at most limit lines.
func writeReplayDiff(w io.Writer, name, baseline string, lines []replayDiffLine, limit int) {
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

// replayDiffJSON is one strategy's diff as --json prints it.
type replayDiffJSON struct {
	Strategy string               `json:"strategy"`
	Baseline string               `json:"baseline"`
	Removed  int                  `json:"removed"`
	Added    int                  `json:"added"`
	Lines    []replayDiffLineJSON `json:"lines"` // at most --diff-limit
}

type replayDiffLineJSON struct {
	Op        string `json:"op"`
	Device    string `json:"device"`
	Fence     string `json:"fence"`
	Type      string `json:"type"`
	EventTime string `json:"event_time"`
	EventNs   int64  `json:"event_ns"`
}

// replayMeta is the "run" object of replay --json.
type replayMeta struct {
	Files        []string         `json:"files"`
	Records      int64            `json:"records"`
	SkippedLines int64            `json:"skipped_lines"`
	FirstSkip    string           `json:"first_skip,omitempty"`
	Devices      int              `json:"devices"`
	Fences       int              `json:"fences"`
	FirstIngest  time.Time        `json:"first_ingest"`
	LastIngest   time.Time        `json:"last_ingest"`
	Baseline     string           `json:"baseline"`
	Diffs        []replayDiffJSON `json:"diffs"`
}

// writeReplay prints the result as a table and diffs, or as JSON.
func writeReplay(w io.Writer, o *replayOptions, res *replayResult) error {
	base := res.rows[res.baseline].Name
	if o.json {
		meta := replayMeta{
			Files: res.files, Records: res.read.Records, SkippedLines: res.read.Skipped,
			Devices: res.devices, Fences: res.fences, FirstIngest: res.first, LastIngest: res.last,
			Baseline: base, Diffs: []replayDiffJSON{},
		}
		if res.read.FirstSkip != nil {
			meta.FirstSkip = res.read.FirstSkip.Error()
		}
		for i := range res.rows {
			if i == res.baseline {
				continue
			}
			lines := replayDiff(res.transitions[res.baseline], res.transitions[i])
			d := replayDiffJSON{Strategy: res.rows[i].Name, Baseline: base, Lines: []replayDiffLineJSON{}}
			d.Removed, d.Added = countOps(lines)
			for _, l := range lines[:min(len(lines), max(o.diffLimit, 0))] {
				d.Lines = append(d.Lines, replayDiffLineJSON{Op: string(l.op), Device: l.device, Fence: l.fence,
					Type: l.typ.String(), EventTime: replayTime(l.event), EventNs: l.event})
			}
			meta.Diffs = append(meta.Diffs, d)
		}
		return shadow.WriteJSON(w, meta, res.rows)
	}
	fmt.Fprintf(w, "capture: %d records of %d devices from %s, arrived %s to %s; %d fences\n",
		res.read.Records, res.devices, strings.Join(res.files, ", "),
		res.first.Format(time.RFC3339), res.last.Format(time.RFC3339), res.fences)
	if res.read.Skipped > 0 {
		fmt.Fprintf(w, "skipped %d unreadable lines (a crash tears the last record); the first: %v\n", res.read.Skipped, res.read.FirstSkip)
	}
	fmt.Fprintln(w)
	if err := shadow.WriteTable(w, res.rows); err != nil {
		return err
	}
	for i := range res.rows {
		if i == res.baseline {
			continue
		}
		fmt.Fprintln(w)
		writeReplayDiff(w, res.rows[i].Name, base, replayDiff(res.transitions[res.baseline], res.transitions[i]), o.diffLimit)
	}
	return nil
}
