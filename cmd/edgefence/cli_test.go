package main

// The command line as a user meets it: help, mistakes and version, run
// through the built binary.

import (
	"flag"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/edgefence/edgefence/auth"
	"github.com/edgefence/edgefence/ingest"
	"github.com/edgefence/edgefence/internal/cmdhelp"
)

// runCLI runs the binary with args to its end and returns its exit code,
// stdout and stderr.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = cleanEnv()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("edgefence %v: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

// A mistyped command is an error, exit 2, that says so and suggests the
// command meant, without a page of help.
func TestUnknownCommandIsAnError(t *testing.T) {
	code, stdout, stderr := runCLI(t, "serv")
	if code != 2 || !strings.Contains(stderr, `unknown command "serv"`) || !strings.Contains(stderr, "serve") {
		t.Errorf("edgefence serv: exit %d, stderr %q, want 2 and unknown command naming serve", code, stderr)
	}
	if stdout != "" || strings.Count(stderr, "\n") > 2 {
		t.Errorf("edgefence serv printed more than the error and a hint:\n%s%s", stdout, stderr)
	}
	if code, _, stderr = runCLI(t, "help", "serv"); code != 2 || !strings.Contains(stderr, "unknown command") {
		t.Errorf("edgefence help serv: exit %d, %q", code, stderr)
	}
	if code, _, stderr = runCLI(t, "store", "chek"); code != 2 || !strings.Contains(stderr, `unknown command "chek"`) ||
		!strings.Contains(stderr, "check") || strings.Count(stderr, "\n") > 2 {
		t.Errorf("edgefence store chek: exit %d, %q", code, stderr)
	}
}

// An argument a command does not take is a wrong command line like a
// wrong flag: exit 2, the error naming it last; where the command has
// subcommands, the one meant is suggested.
func TestStrayArgumentIsAUsageError(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "extra"}, `"extra"`},
		{[]string{"bridge", "extra"}, `"extra"`},
		{[]string{"worker", "extra"}, `"extra"`},
		{[]string{"simulate", "extra"}, `"extra"`},
		{[]string{"loadgen", "sutie"}, `unknown command "sutie" (did you mean suite?)`},
		{[]string{"loadgen", "suite", "extra"}, `"extra"`},
		{[]string{"store", "check", "extra"}, `"extra"`},
		{[]string{"passwd", "hunter2"}, "stdin"},
		{[]string{"version", "extra"}, `"extra"`},
		{[]string{"replay"}, "capture file"},
		{[]string{"replay", "capture.jsonl", "--bogus"}, "bogus"},
	} {
		code, stdout, stderr := runCLI(t, tc.args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		if code != 2 || stdout != "" || len(lines) > 2 || !strings.Contains(lines[0], tc.want) {
			t.Errorf("edgefence %v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and an error naming %s", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

// `edgefence help CMD` is CMD's help, as `edgefence CMD --help` prints it.
func TestHelpCommandPrintsTheCommandsHelp(t *testing.T) {
	for _, path := range [][]string{{"serve"}, {"store", "check"}, {"replay"}} {
		code, viaHelp, stderr := runCLI(t, append([]string{"help"}, path...)...)
		if code != 0 || stderr != "" {
			t.Errorf("edgefence help %v: exit %d, stderr %q", path, code, stderr)
		}
		code, viaFlag, _ := runCLI(t, append(path, "--help")...)
		if code != 0 {
			t.Errorf("edgefence %v --help: exit %d", path, code)
		}
		if viaHelp != viaFlag || !strings.Contains(viaHelp, "edgefence "+strings.Join(path, " ")) {
			t.Errorf("edgefence help %v printed\n%s\nwant what --help prints:\n%s", path, viaHelp, viaFlag)
		}
	}
	if _, top, _ := runCLI(t, "help"); !strings.Contains(top, "COMMANDS") {
		t.Errorf("edgefence help: %q, want the list of commands", top)
	}
	for _, h := range []string{"--help", "-h"} {
		if code, top, _ := runCLI(t, "help", h); code != 0 || !strings.Contains(top, "COMMANDS") {
			t.Errorf("edgefence help %s: exit %d, %q, want the list of commands", h, code, top)
		}
	}
	// The hint after a mistake names a help that works.
	_, _, stderr := runCLI(t, "help", "serv")
	if hint := strings.TrimSpace(stderr[strings.LastIndex(strings.TrimSpace(stderr), "\n")+1:]); hint != "Run 'edgefence --help' for usage." {
		t.Errorf("edgefence help serv: hint %q, want the top-level help", hint)
	}
}

// --version prints what the version command prints.
func TestVersionFlag(t *testing.T) {
	code, flagOut, _ := runCLI(t, "--version")
	_, cmdOut, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(flagOut, "edgefence ") || flagOut != cmdOut {
		t.Errorf("--version: exit %d, %q; version: %q", code, flagOut, cmdOut)
	}
}

// A wrong flag or value is reported last, with only a hint to the help:
// the error does not scroll away above the flags.
func TestBadFlagErrorIsTheLastThingPrinted(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--bogus"},
		{"serve", "--hold", "soon"},
		{"simulate", "--holds", "often"},
		{"store", "check", "--bogus"},
		{"--bogus"},
	} {
		code, stdout, stderr := runCLI(t, args...)
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		bad := args[len(args)-1]
		if code != 2 || stdout != "" || len(lines) > 2 || !strings.Contains(lines[0], strings.TrimLeft(bad, "-")) {
			t.Errorf("edgefence %v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and the error in at most two lines", args, code, stdout, stderr)
		}
		if len(lines) == 2 && !strings.Contains(lines[1], "--help") {
			t.Errorf("edgefence %v: second line %q is not a hint to --help", args, lines[1])
		}
	}
}

// commandPaths lists every command of the tree as its words.
func commandPaths(cmds []*ffcli.Command, prefix []string) [][]string {
	var out [][]string
	for _, c := range cmds {
		p := append(slices.Clone(prefix), c.Name)
		out = append(out, p)
		out = append(out, commandPaths(c.Subcommands, p)...)
	}
	return out
}

// Every command's help fits 100 columns; serve's flags are grouped, and
// the flags it no longer has are not offered.
func TestHelpIsWrappedGroupedAndOffersNoRemovedFlag(t *testing.T) {
	for _, path := range commandPaths(rootCommand().Subcommands, nil) {
		_, out, _ := runCLI(t, append(path, "--help")...)
		for line := range strings.Lines(out) {
			if n := len([]rune(strings.TrimSuffix(line, "\n"))); n > cmdhelp.Width {
				t.Errorf("edgefence %v --help: a line of %d columns: %s", path, n, line)
			}
		}
	}
	var out string
	for cmd, want := range map[string][]string{
		"serve":  {"USAGE", "LISTENERS", "ENGINE", "SECURITY", "CLUSTER", "OUTPUT", "OPS"},
		"bridge": {"USAGE", "UPSTREAM", "ENGINE", "OUTPUT", "OPS"},
		"worker": {"USAGE", "CLUSTER", "SECURITY", "ENGINE", "OUTPUT", "OPS"},
	} {
		_, out, _ = runCLI(t, cmd, "--help")
		var headings []string
		for line := range strings.Lines(out) {
			if line != "\n" && line[0] != ' ' && strings.ToUpper(line) == line {
				headings = append(headings, strings.TrimSpace(line))
			}
		}
		if !slices.Equal(headings, want) {
			t.Errorf("%s --help headings %v, want %v", cmd, headings, want)
		}
	}
	_, out, _ = runCLI(t, "serve", "--help")
	for _, f := range removedServeFlags() {
		if strings.Contains(out, "--"+f.Name) {
			t.Errorf("serve --help lists the removed --%s", f.Name)
		}
	}
}

// --auth's help names every role the user file may give (it named 3 of 4).
func TestAuthHelpNamesEveryRole(t *testing.T) {
	_, out, _ := runCLI(t, "serve", "--help")
	_, text, _ := strings.Cut(out, "  --auth ")
	text, _, _ = strings.Cut(text, "\n  --")
	for _, r := range auth.Roles() {
		if !strings.Contains(text, r.String()) {
			t.Errorf("serve --help: --auth does not name the role %s:\n%s", r, text)
		}
	}
}

// Every flag's default, as the help prints it, can be typed back in.
func TestEveryPrintedDefaultParses(t *testing.T) {
	var walk func([]*ffcli.Command)
	walk = func(cmds []*ffcli.Command) {
		for _, c := range cmds {
			if c.FlagSet != nil {
				c.FlagSet.VisitAll(func(f *flag.Flag) {
					printed := cmdhelp.ShownDefault(f)
					if printed == "" {
						printed = f.DefValue
					}
					if err := f.Value.Set(printed); err != nil {
						t.Errorf("%s --%s %q: %v", c.FlagSet.Name(), f.Name, printed, err)
					}
					if _, list := f.Value.(*ingest.TopicFlags); !list && f.Value.String() != f.DefValue {
						t.Errorf("%s --%s %q reads back as %q, not %q", c.FlagSet.Name(), f.Name, printed, f.Value.String(), f.DefValue)
					}
				})
			}
			walk(c.Subcommands)
		}
	}
	walk(rootCommand().Subcommands)
}
