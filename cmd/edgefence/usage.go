package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/internal/flagvalue"
)

// helpWidth is the column the help text wraps at.
const helpWidth = 100

// flagGroups sorts a command's flags under headings in its help. The
// flags a group's define function adds belong to it, so a flag defined
// among its neighbours needs no separate list that could drift.
type flagGroups struct {
	titles []string
	of     map[string]string // flag name → title
}

// group runs define, which adds flags to fs, and files those flags under
// title.
func (g *flagGroups) group(fs *flag.FlagSet, title string, define func()) {
	before := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { before[f.Name] = true })
	define()
	if g.of == nil {
		g.of = map[string]string{}
	}
	if !slices.Contains(g.titles, title) {
		g.titles = append(g.titles, title)
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !before[f.Name] {
			g.of[f.Name] = title
		}
	})
}

// hidden reports whether f stays out of the help: a removed flag is
// still accepted, to explain itself, but is no longer offered.
func hidden(f *flag.Flag) bool {
	_, removed := f.Value.(*removedFlag)
	return removed
}

// usageFunc renders a command's help with its flags under groups (nil:
// one FLAGS heading), wrapped at helpWidth.
func usageFunc(groups *flagGroups) func(*ffcli.Command) string {
	return func(c *ffcli.Command) string {
		var b strings.Builder
		b.WriteString("USAGE\n")
		usage := c.ShortUsage
		if usage == "" {
			usage = c.Name
		}
		b.WriteString("  " + usage + "\n\n")
		if c.LongHelp != "" {
			b.WriteString(wrap(c.LongHelp, 0, helpWidth) + "\n\n")
		} else if c.ShortHelp != "" {
			b.WriteString(wrap(c.ShortHelp, 0, helpWidth) + "\n\n")
		}
		if len(c.Subcommands) > 0 {
			b.WriteString("SUBCOMMANDS\n")
			writeCommands(&b, c.Subcommands)
			b.WriteString("\n")
		}
		byGroup := map[string][]*flag.Flag{}
		if c.FlagSet != nil {
			c.FlagSet.VisitAll(func(f *flag.Flag) {
				if hidden(f) {
					return
				}
				title := "FLAGS"
				if groups != nil {
					title = groups.of[f.Name]
					if title == "" {
						title = "OTHER FLAGS"
					}
				}
				byGroup[title] = append(byGroup[title], f)
			})
		}
		titles := []string{"FLAGS"}
		if groups != nil {
			titles = append(slices.Clone(groups.titles), "OTHER FLAGS")
		}
		for _, title := range titles {
			if len(byGroup[title]) == 0 {
				continue
			}
			b.WriteString(strings.ToUpper(title) + "\n")
			for _, f := range byGroup[title] {
				writeFlag(&b, f)
			}
			b.WriteString("\n")
		}
		return strings.TrimRight(b.String(), "\n") // ffcli prints a line break after it
	}
}

// writeCommands lists commands with their short help, aligned.
func writeCommands(b *strings.Builder, cmds []*ffcli.Command) {
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.Name))
	}
	indent := 2 + width + 2
	for _, c := range cmds {
		fmt.Fprintf(b, "  %-*s  %s\n", width, c.Name, strings.TrimLeft(wrap(c.ShortHelp, indent, helpWidth), " "))
	}
}

// flagColumn is where a flag's description starts; a longer name and
// argument put it on the next line.
const flagColumn = 30

// writeFlag writes "  --name ARG   description (default X)", the
// description wrapped under itself.
func writeFlag(b *strings.Builder, f *flag.Flag) {
	arg, text := flag.UnquoteUsage(f)
	if arg == "value" {
		arg = valueName(f.Value)
	}
	head := "  --" + f.Name
	switch {
	case isBoolFlag(f) && arg != "":
		head += "[=" + arg + "]" // a switch that may take a value
	case isBoolFlag(f):
	default:
		head += " " + arg
	}
	if def := shownDefault(f); def != "" {
		text += " (default " + def + ")"
	}
	body := wrap(text, flagColumn, helpWidth)
	if len(head)+2 <= flagColumn {
		b.WriteString(head + body[len(head):] + "\n")
		return
	}
	b.WriteString(head + "\n" + body + "\n")
}

// valueName names what a flag of edgefence's own value types takes.
func valueName(v flag.Value) string {
	switch v.(type) {
	case flagvalue.Uint[uint8], flagvalue.Uint[uint16], flagvalue.Uint[uint32], flagvalue.Int32, flagvalue.Small:
		return "int"
	case flagvalue.Off, flagvalue.On:
		return "on|off"
	case flagvalue.Size:
		return "size"
	case flagvalue.Time:
		return "time"
	case *flagvalue.Durations:
		return "durations"
	case *flagvalue.Joined:
		return "list"
	case holdFlag:
		return "duration|adaptive"
	case *strategyList:
		return "strategies"
	case *telemetryTopics:
		return "filter"
	}
	return "value"
}

// shownDefault is the default printed after a flag's description: none
// for a zero value, as package flag prints it; a duration without its
// zero minutes and seconds (1h, not 1h0m0s).
func shownDefault(f *flag.Flag) string {
	switch f.DefValue {
	case "", "0", "0s", "false":
		return ""
	}
	if _, err := time.ParseDuration(f.DefValue); err == nil {
		return shortDuration(f.DefValue)
	}
	return f.DefValue
}

// shortDuration drops a duration's trailing zero units: 1h0m0s is 1h,
// 5m0s is 5m; 1m30s stays.
func shortDuration(s string) string {
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// wrap fills text into lines of at most width columns, each indented by
// indent spaces; the text's own line breaks are kept. A word too long for
// a line is broken after its commas.
func wrap(text string, indent, width int) string {
	pad := strings.Repeat(" ", indent)
	var out []string
	for para := range strings.SplitSeq(text, "\n") {
		line := pad
		for _, w := range words(para, width-indent) {
			if len(line) > indent && len(line)+1+len(w) > width {
				out = append(out, line)
				line = pad
			}
			if len(line) > indent {
				line += " "
			}
			line += w
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// words splits s at spaces, and a word longer than max after its commas.
func words(s string, max int) []string {
	var out []string
	for _, w := range strings.Fields(s) {
		for len(w) > max {
			i := strings.LastIndex(w[:max], ",")
			if i < 0 {
				break
			}
			out, w = append(out, w[:i+1]), w[i+1:]
		}
		out = append(out, w)
	}
	return out
}
