package replay

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/edgefence/edgefence/shadow"
)

// diffJSON is one strategy's diff as --json prints it.
type diffJSON struct {
	Strategy string         `json:"strategy"`
	Baseline string         `json:"baseline"`
	Removed  int            `json:"removed"`
	Added    int            `json:"added"`
	Lines    []diffLineJSON `json:"lines"` // at most the diff limit
}

type diffLineJSON struct {
	Op        string `json:"op"`
	Device    string `json:"device"`
	Fence     string `json:"fence"`
	Type      string `json:"type"`
	EventTime string `json:"event_time"`
	EventNs   int64  `json:"event_ns"`
}

// meta is the "run" object of replay --json.
type meta struct {
	Files        []string   `json:"files"`
	Records      int64      `json:"records"`
	SkippedLines int64      `json:"skipped_lines"`
	FirstSkip    string     `json:"first_skip,omitempty"`
	Devices      int        `json:"devices"`
	Fences       int        `json:"fences"`
	FirstIngest  time.Time  `json:"first_ingest"`
	LastIngest   time.Time  `json:"last_ingest"`
	Baseline     string     `json:"baseline"`
	Diffs        []diffJSON `json:"diffs"`
}

// WriteJSON prints the result as one JSON object: the run, with each
// strategy's diff against the baseline (at most diffLimit lines each),
// and the strategies' figures.
func (res *Result) WriteJSON(w io.Writer, diffLimit int) error {
	base := res.Rows[res.Baseline].Name
	m := meta{
		Files: res.Files, Records: res.Read.Records, SkippedLines: res.Read.Skipped,
		Devices: res.Devices, Fences: res.Fences, FirstIngest: res.First, LastIngest: res.Last,
		Baseline: base, Diffs: []diffJSON{},
	}
	if res.Read.FirstSkip != nil {
		m.FirstSkip = res.Read.FirstSkip.Error()
	}
	for i := range res.Rows {
		if i == res.Baseline {
			continue
		}
		lines := Diff(res.Transitions[res.Baseline], res.Transitions[i])
		d := diffJSON{Strategy: res.Rows[i].Name, Baseline: base, Lines: []diffLineJSON{}}
		d.Removed, d.Added = countOps(lines)
		for _, l := range lines[:min(len(lines), max(diffLimit, 0))] {
			d.Lines = append(d.Lines, diffLineJSON{Op: string(l.Op), Device: l.Device, Fence: l.Fence,
				Type: l.Type.String(), EventTime: FormatTime(l.Event), EventNs: l.Event})
		}
		m.Diffs = append(m.Diffs, d)
	}
	return shadow.WriteJSON(w, m, res.Rows)
}

// WriteTable prints the result as a person reads it: what was read, the
// strategies' table, then each strategy's diff against the baseline (at
// most diffLimit lines each).
func (res *Result) WriteTable(w io.Writer, diffLimit int) error {
	base := res.Rows[res.Baseline].Name
	fmt.Fprintf(w, "capture: %d records of %d devices from %s, arrived %s to %s; %d fences\n",
		res.Read.Records, res.Devices, strings.Join(res.Files, ", "),
		res.First.Format(time.RFC3339), res.Last.Format(time.RFC3339), res.Fences)
	if res.Read.Skipped > 0 {
		fmt.Fprintf(w, "skipped %d unreadable lines (a crash tears the last record); the first: %v\n", res.Read.Skipped, res.Read.FirstSkip)
	}
	fmt.Fprintln(w)
	if err := shadow.WriteTable(w, res.Rows); err != nil {
		return err
	}
	for i := range res.Rows {
		if i == res.Baseline {
			continue
		}
		fmt.Fprintln(w)
		WriteDiff(w, res.Rows[i].Name, base, Diff(res.Transitions[res.Baseline], res.Transitions[i]), diffLimit)
	}
	return nil
}
