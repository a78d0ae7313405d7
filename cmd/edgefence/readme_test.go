package main

import (
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helpFlags reads the flags and printed defaults of a command's --help.
func helpFlags(t *testing.T, help string) map[string]string {
	t.Helper()
	flags := map[string]string{}
	var name string
	var text []string
	flush := func() {
		if name == "" {
			return
		}
		def := ""
		if m := regexp.MustCompile(`\(default (.+)\)$`).FindStringSubmatch(strings.Join(text, " ")); m != nil {
			def = m[1]
		}
		flags[name] = def
		name, text = "", nil
	}
	for line := range strings.Lines(help) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "  --"):
			flush()
			head := strings.Fields(line)[0]
			name = strings.TrimPrefix(head, "--")
			name, _, _ = strings.Cut(name, "[")
			if rest := strings.TrimSpace(line[len("  "+head):]); len(line) > flagColumn {
				// the description begins on this line, after the argument
				rest = strings.TrimSpace(line[flagColumn:])
				text = append(text, rest)
			}
		case strings.HasPrefix(line, strings.Repeat(" ", flagColumn)) && name != "":
			text = append(text, strings.TrimSpace(line))
		default:
			flush()
		}
	}
	flush()
	return flags
}

// readmeFlags reads the README's table of serve's flags: flag names and
// their defaults as written.
func readmeFlags(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| flag | default | meaning |\n|---|---|---|\n")
	if !ok {
		t.Fatal("README.md has no flag table")
	}
	flags := map[string]string{}
	tick := regexp.MustCompile("`([^`]*)`")
	for line := range strings.Lines(table) {
		if !strings.HasPrefix(line, "| ") {
			break
		}
		cells := strings.Split(strings.ReplaceAll(line, `\|`, "¦"), " | ")
		var names []string
		for _, m := range tick.FindAllStringSubmatch(cells[0], -1) {
			n, _, _ := strings.Cut(strings.TrimPrefix(m[1], "--"), "[")
			names = append(names, n)
		}
		defs := []string{cells[1]}
		if len(names) > 1 {
			defs = strings.Split(cells[1], ", ")
		}
		if len(defs) != len(names) {
			t.Errorf("README row %v: %d defaults for %d flags: %s", names, len(defs), len(names), cells[1])
			continue
		}
		for i, n := range names {
			// The first code span is the default; what follows explains it.
			if m := tick.FindStringSubmatch(defs[i]); m != nil {
				flags[n] = m[1]
			} else {
				flags[n] = strings.TrimSpace(defs[i])
			}
		}
	}
	return flags
}

// sameDefault compares a default as the help prints it with the README's.
func sameDefault(help, readme string) bool {
	norm := func(s string) string {
		s = strings.ReplaceAll(s, ", ", ",")
		switch s {
		case "", "0", "0s", "false", "off", "–":
			return ""
		case "GOMAXPROCS":
			return strconv.Itoa(runtime.GOMAXPROCS(0))
		}
		if d, err := time.ParseDuration(s); err == nil {
			return d.String()
		}
		return s
	}
	return norm(help) == norm(readme)
}

// The README's flag table and serve --help come from the same flags: each
// flag serve offers is in the table with the default serve has, and the
// table names no flag serve does not offer.
func TestREADMEFlagTableMatchesServeHelp(t *testing.T) {
	_, out, _ := runCLI(t, "serve", "--help")
	help := helpFlags(t, out)
	if len(help) < 40 {
		t.Fatalf("read %d flags from serve --help:\n%s", len(help), out)
	}
	readme := readmeFlags(t)
	for name, def := range help {
		rd, ok := readme[name]
		switch {
		case !ok:
			t.Errorf("--%s (default %q) is not in the README's flag table", name, def)
		case !sameDefault(def, rd):
			t.Errorf("--%s: default %q in serve --help, %q in the README", name, def, rd)
		}
	}
	for name := range readme {
		if _, ok := help[name]; !ok {
			t.Errorf("the README's flag table has --%s, which serve --help does not list", name)
		}
	}
}
