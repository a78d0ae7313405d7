package main

import (
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgefence/edgefence/internal/cmdhelp"
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
			if len(line) > cmdhelp.FlagColumn && line[cmdhelp.FlagColumn-1] == ' ' { // the description begins on this line
				text = append(text, strings.TrimSpace(line[cmdhelp.FlagColumn:]))
			}
		case strings.HasPrefix(line, strings.Repeat(" ", cmdhelp.FlagColumn)) && name != "":
			text = append(text, strings.TrimSpace(line))
		default:
			flush()
		}
	}
	flush()
	return flags
}

// asServe is a table's default that says it is serve's.
const asServe = "as `serve`"

// flagTable reads the table of flags in the Markdown file at path (the
// one headed "| flag | default | meaning |"): flag names and their
// defaults as written.
func flagTable(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| flag | default | meaning |\n|---|---|---|\n")
	if !ok {
		t.Fatalf("%s has no flag table", path)
	}
	flags := map[string]string{}
	tick := regexp.MustCompile("`([^`]*)`")
	for line := range strings.Lines(table) {
		if !strings.HasPrefix(line, "| ") {
			break
		}
		cells := strings.Split(strings.ReplaceAll(line, `\|`, "¦"), "|")[1:]
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		var names []string
		for _, m := range tick.FindAllStringSubmatch(cells[0], -1) {
			n, _, _ := strings.Cut(strings.TrimPrefix(m[1], "--"), "[")
			names = append(names, n)
		}
		// One default for several flags is each one's; else one each.
		defs := strings.Split(cells[1], ", ")
		if cells[1] == asServe || len(names) == 1 || len(defs) == 1 {
			defs = slices.Repeat([]string{cells[1]}, len(names))
		}
		if len(defs) != len(names) {
			t.Errorf("%s row %v: %d defaults for %d flags: %s", path, names, len(defs), len(names), cells[1])
			continue
		}
		for i, n := range names {
			// The first code span is the default; what follows explains it.
			if m := tick.FindStringSubmatch(defs[i]); m != nil && defs[i] != asServe {
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
		case "host-pid": // the worker's name: this host's, and its pid
			return help
		}
		if d, err := time.ParseDuration(s); err == nil {
			return d.String()
		}
		return s
	}
	return norm(help) == norm(readme)
}

// checkFlagTable compares the flag table of the document at path with
// the flags help lists: each row's flag is listed with the default the
// row gives (serve's, for "as `serve`"), and when complete, each flag
// listed has a row.
func checkFlagTable(t *testing.T, path string, help, serve map[string]string, complete bool) {
	t.Helper()
	table := flagTable(t, path)
	for name, def := range table {
		hd, ok := help[name]
		switch {
		case !ok:
			t.Errorf("%s has --%s, which the command's --help does not list", path, name)
		case def == asServe && !sameDefault(hd, serve[name]):
			t.Errorf("%s: --%s is as serve's, but its default is %q and serve's %q", path, name, hd, serve[name])
		case def != asServe && !sameDefault(hd, def):
			t.Errorf("%s: --%s has default %q in --help, %q in the document", path, name, hd, def)
		}
	}
	for name, def := range help {
		if _, ok := table[name]; complete && !ok {
			t.Errorf("--%s (default %q) is not in the flag table of %s", name, def, path)
		}
	}
}

// The documents' flag tables and the commands' --help come from the same
// flags: each flag serve and bridge offer is in their table with the
// default they have, the worker's table says its own flags' defaults
// right, and no table names a flag its command does not offer.
func TestFlagTablesMatchTheHelp(t *testing.T) {
	flagsOf := func(cmd string) map[string]string {
		_, out, _ := runCLI(t, cmd, "--help")
		flags := helpFlags(t, out)
		if len(flags) < 20 {
			t.Fatalf("read %d flags from %s --help:\n%s", len(flags), cmd, out)
		}
		return flags
	}
	serve := flagsOf("serve")
	checkFlagTable(t, "../../README.md", serve, serve, true)
	checkFlagTable(t, "../../docs/bridge.md", flagsOf("bridge"), serve, true)
	checkFlagTable(t, "../../docs/scale-out.md", flagsOf("worker"), serve, false)
}
