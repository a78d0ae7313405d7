package shadow

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Row is one strategy's line of a report. Ground-truth columns are filled
// by the simulator only (HasTruth).
type Row struct {
	Stats
	HasTruth bool
	Truth    int64 // ground-truth transitions
	Matched  int64 // emitted transitions aligned with one of the truth
	Phantoms int64 // emitted with no ground-truth match
	Missed   int64 // ground truth with no emitted match
}

// PhantomRate is phantoms ÷ emitted transitions.
func (r *Row) PhantomRate() float64 { return Rate(r.Phantoms, r.Transitions) }

// ReversalRate is reversals ÷ emitted transitions.
func (r *Row) ReversalRate() float64 { return Rate(r.Reversals, r.Transitions) }

// PingsPerSecond is what the engine sustained on this strategy.
func (r *Row) PingsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Pings) / r.Elapsed.Seconds()
}

// WriteTable prints rows as an aligned text table. The phantom ratio
// column compares each strategy with the first (arrival order, when run).
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	truth := len(rows) > 0 && rows[0].HasTruth
	if truth {
		fmt.Fprintln(tw, "strategy\ttransitions\thistoric\tphantom\tvs first\treversal\tmissed\tlate\tlost\toverflow\tadded mean\tp50\tp99\tmax\tpings/s\t")
	} else {
		fmt.Fprintln(tw, "strategy\ttransitions\thistoric\treversal\tvs first\tlate\tlost\toverflow\tadded mean\tp50\tp99\tmax\tpings/s\t")
	}
	for i := range rows {
		r := &rows[i]
		lat := fmt.Sprintf("%v\t%v\t%v\t%v", round(r.Mean()), round(r.Percentile(50)), round(r.Percentile(99)), round(r.Percentile(100)))
		if truth {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t\n", r.Name, r.Transitions, r.Historic,
				pct(r.PhantomRate()), ratio(rows[0].PhantomRate(), r.PhantomRate()), pct(r.ReversalRate()),
				pct(Rate(r.Missed, r.Truth)), pct(Rate(r.Late, r.Pings)), pct(Rate(r.Lost, r.Pings)), pct(Rate(r.Overflow, r.Pings)), lat, r.PingsPerSecond())
		} else {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t\n", r.Name, r.Transitions, r.Historic,
				pct(r.ReversalRate()), ratio(rows[0].ReversalRate(), r.ReversalRate()),
				pct(Rate(r.Late, r.Pings)), pct(Rate(r.Lost, r.Pings)), pct(Rate(r.Overflow, r.Pings)), lat, r.PingsPerSecond())
		}
	}
	return tw.Flush()
}

func pct(f float64) string { return fmt.Sprintf("%.3f%%", 100*f) }

// ratio says how many times fewer than the first row's rate a row has.
func ratio(first, r float64) string {
	switch {
	case r == 0 && first == 0:
		return "-"
	case r == 0:
		return "∞×"
	}
	return fmt.Sprintf("%.1f×", first/r)
}

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

// JSONRow is a Row as --json prints it; the simulator embeds it to add
// its own columns.
type JSONRow struct {
	Strategy       string   `json:"strategy"`
	HoldMs         int64    `json:"hold_ms"`
	Adaptive       bool     `json:"adaptive,omitempty"`
	NoAccuracy     bool     `json:"no_accuracy,omitempty"`
	Pings          int64    `json:"pings"`
	Transitions    int64    `json:"transitions"`
	Reversals      int64    `json:"reversals"`
	ReversalRate   float64  `json:"reversal_rate"`
	Historic       int64    `json:"historic"`
	Late           int64    `json:"late"`
	LateRate       float64  `json:"late_rate"`
	Lost           int64    `json:"lost"`
	LostRate       float64  `json:"lost_rate"`
	Overflow       int64    `json:"overflow"`
	TruthTotal     *int64   `json:"truth_transitions,omitempty"`
	Phantoms       *int64   `json:"phantoms,omitempty"`
	PhantomRate    *float64 `json:"phantom_rate,omitempty"`
	Missed         *int64   `json:"missed,omitempty"`
	AddedMeanMs    float64  `json:"added_latency_mean_ms"`
	AddedP50Ms     float64  `json:"added_latency_p50_ms"`
	AddedP99Ms     float64  `json:"added_latency_p99_ms"`
	AddedMaxMs     float64  `json:"added_latency_max_ms"`
	PingsPerSecond float64  `json:"pings_per_second"`
}

// WriteJSON prints rows, with meta (the run's parameters), as one JSON object.
func WriteJSON(w io.Writer, meta any, rows []Row) error {
	js := make([]any, len(rows))
	for i := range rows {
		js[i] = NewJSONRow(&rows[i])
	}
	return WriteJSONRows(w, meta, js)
}

// WriteJSONRows prints rows (JSONRows, or structs embedding one), with
// meta, as WriteJSON does.
func WriteJSONRows(w io.Writer, meta any, rows []any) error {
	out := struct {
		Run        any   `json:"run"`
		Strategies []any `json:"strategies"`
	}{Run: meta, Strategies: rows}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// NewJSONRow is r as --json prints it.
func NewJSONRow(r *Row) JSONRow {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	j := JSONRow{
		Strategy: r.Name, HoldMs: r.Hold.Milliseconds(), Adaptive: r.Adaptive, NoAccuracy: r.NoAccuracy, Pings: r.Pings, Transitions: r.Transitions,
		Reversals: r.Reversals, ReversalRate: r.ReversalRate(), Late: r.Late, LateRate: Rate(r.Late, r.Pings),
		Historic: r.Historic, Lost: r.Lost, LostRate: Rate(r.Lost, r.Pings),
		Overflow: r.Overflow, AddedMeanMs: ms(r.Mean()), AddedP50Ms: ms(r.Percentile(50)), AddedP99Ms: ms(r.Percentile(99)),
		AddedMaxMs: ms(r.Percentile(100)), PingsPerSecond: r.PingsPerSecond(),
	}
	if r.HasTruth {
		pr := r.PhantomRate()
		j.TruthTotal, j.Phantoms, j.PhantomRate, j.Missed = &r.Truth, &r.Phantoms, &pr, &r.Missed
	}
	return j
}
