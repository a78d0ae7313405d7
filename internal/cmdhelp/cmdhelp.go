// Package cmdhelp renders a command line program's help as a reader
// wants it: wrapped at 100 columns, flags grouped under headings, removed
// flags left out (and reported when set), defaults shown as they can be
// typed back in; names the commands a mistyped one may have meant; and
// runs the program's command tree so that help goes to stdout when asked
// for and a wrong command line's error is the last line printed, exit 2
// (run.go).
package cmdhelp

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// Width is the column the help text wraps at.
const Width = 100

// Groups sorts a command's flags under headings in its help. The
// flags a group's define function adds belong to it, so a flag defined
// among its neighbours needs no separate list that could drift.
type Groups struct {
	titles []string
	of     map[string]string // flag name → title
}

// Group runs define, which adds flags to fs, and files those flags under
// title.
func (g *Groups) Group(fs *flag.FlagSet, title string, define func()) {
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

// Style is what a program's help knows of its own flags: what its own
// value types take ("" for "value").
type Style struct {
	ValueName func(flag.Value) string
}

// Usage renders a command's help with its flags under groups (nil: one
// FLAGS heading), wrapped at Width.
func (st Style) Usage(groups *Groups) func(*ffcli.Command) string {
	return func(c *ffcli.Command) string {
		var b strings.Builder
		b.WriteString("USAGE\n")
		usage := c.ShortUsage
		if usage == "" {
			usage = c.Name
		}
		b.WriteString("  " + usage + "\n\n")
		if c.LongHelp != "" {
			b.WriteString(Wrap(c.LongHelp, 0, Width) + "\n\n")
		} else if c.ShortHelp != "" {
			b.WriteString(Wrap(c.ShortHelp, 0, Width) + "\n\n")
		}
		if len(c.Subcommands) > 0 {
			b.WriteString("SUBCOMMANDS\n")
			WriteCommands(&b, c.Subcommands)
			b.WriteString("\n")
		}
		byGroup := map[string][]*flag.Flag{}
		if c.FlagSet != nil {
			c.FlagSet.VisitAll(func(f *flag.Flag) {
				if isRemoved(f) {
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
				st.writeFlag(&b, f)
			}
			b.WriteString("\n")
		}
		return strings.TrimRight(b.String(), "\n") // ffcli prints a line break after it
	}
}

// WriteCommands lists commands with their short help, aligned.
func WriteCommands(b *strings.Builder, cmds []*ffcli.Command) {
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.Name))
	}
	indent := 2 + width + 2
	for _, c := range cmds {
		fmt.Fprintf(b, "  %-*s  %s\n", width, c.Name, strings.TrimLeft(Wrap(c.ShortHelp, indent, Width), " "))
	}
}

// FlagColumn is where a flag's description starts; a longer name and
// argument put it on the next line.
const FlagColumn = 30

// writeFlag writes "  --name ARG   description (default X)", the
// description wrapped under itself.
func (st Style) writeFlag(b *strings.Builder, f *flag.Flag) {
	arg, text := flag.UnquoteUsage(f)
	if arg == "value" && st.ValueName != nil {
		if n := st.ValueName(f.Value); n != "" {
			arg = n
		}
	}
	head := "  --" + f.Name
	switch {
	case isBoolFlag(f) && arg != "":
		head += "[=" + arg + "]" // a switch that may take a value
	case isBoolFlag(f):
	default:
		head += " " + arg
	}
	if def := ShownDefault(f); def != "" {
		text += " (default " + def + ")"
	}
	body := Wrap(text, FlagColumn, Width)
	if len(head)+2 <= FlagColumn {
		b.WriteString(head + body[len(head):] + "\n")
		return
	}
	b.WriteString(head + "\n" + body + "\n")
}

// ShownDefault is the default printed after a flag's description: none
// for a zero value, as package flag prints it; a duration without its
// zero minutes and seconds (1h, not 1h0m0s).
func ShownDefault(f *flag.Flag) string {
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

// isBoolFlag reports whether f is a switch (package flag's boolFlag).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// Wrap fills text into lines of at most width columns, each indented by
// indent spaces; the text's own line breaks are kept. A word too long for
// a line is broken after its commas.
func Wrap(text string, indent, width int) string {
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

// Find returns the command of cmds named name, or nil.
func Find(cmds []*ffcli.Command, name string) *ffcli.Command {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Unknown names the commands a mistyped name may have meant: those
// it is a prefix of, or within two edits of.
func Unknown(cmds []*ffcli.Command, name string) error {
	var near []string
	for _, c := range cmds {
		if strings.HasPrefix(c.Name, name) || editDistance(c.Name, name) <= 2 {
			near = append(near, c.Name)
		}
	}
	if len(near) == 0 {
		return fmt.Errorf("unknown command %q", name)
	}
	return fmt.Errorf("unknown command %q (did you mean %s?)", name, strings.Join(near, " or "))
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
